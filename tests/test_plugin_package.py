"""An external plug-in package, as a user would write one: a mode, a grader kind and a task
source, declared as entry points, installed with pip into a fresh virtual environment beside the
harness, then used by `harness run` by entry-point name and by `package.module:attr`.

The fresh environment sees the harness and its dependencies through a ``.pth`` file naming the
test's own site-packages (nothing is downloaded at test time); the plug-in itself is built and
installed by pip (``--no-index --no-build-isolation``, setuptools from the same place).
"""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import sysconfig
import textwrap
import venv
from pathlib import Path

import duckdb
import pytest

#: Spawns processes, sandboxes, browsers, clusters or servers (the fast loop skips it).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]

PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "mypkg-harness-plugin"
version = "0.1.0"

[tool.setuptools]
packages = ["mypkg"]

[project.entry-points."harness.modes"]
greedy = "mypkg.modes:Greedy"

[project.entry-points."harness.graders"]
shortest = "mypkg.graders:ShortestGrader"

[project.entry-points."harness.sources"]
countdown = "mypkg.sources:countdown"
"""

MODES = """\
from harness.modes import ReAct


class Greedy(ReAct):
    \"\"\"ReAct that answers at the first chance: the plug-in mode under test.\"\"\"

    name = "greedy"
"""

GRADERS = """\
from typing import ClassVar, Literal

from harness.grading import Grade, GradeContext, Grader, final_answer


class ShortestGrader(Grader):
    kind: Literal["shortest"] = "shortest"
    reads_answer: ClassVar[bool] = True

    max_chars: int

    def evaluate(self, result, context: GradeContext) -> Grade:
        n = len(final_answer(result))
        return Grade.of(n <= self.max_chars, f"{n} characters (at most {self.max_chars})")
"""

SOURCES = """\
from harness.suites import Suite


def countdown(argument, options):
    n = int(argument or options.get("n", 3))
    return Suite.model_validate({
        "suite": f"countdown-{n}",
        "tasks": [
            {"id": f"next-{i}", "prompt": f"What comes after {i}? Answer with the number only.",
             "tools": [], "expect": {"kind": "shortest", "max_chars": 2},
             "mock": {"turns": [{"text": str(i + 1) if i % 2 == 0 else "a long answer"}]}}
            for i in range(n)
        ],
    })
"""

SUITE = """\
suite: short
tasks:
  - id: by-name
    prompt: "Say hi"
    tools: []
    expect: {kind: shortest, max_chars: 2}
    mock: {turns: [{text: "hi"}]}
  - id: by-reference
    prompt: "Say hello"
    tools: []
    expect: {kind: "mypkg.graders:ShortestGrader", max_chars: 2}
    mock: {turns: [{text: "hello"}]}
"""


@pytest.fixture(scope="module")
def plugin_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the plug-in installed by pip and the harness visible."""
    base = tmp_path_factory.mktemp("plugin")
    pkg = base / "src"
    (pkg / "mypkg").mkdir(parents=True)
    (pkg / "pyproject.toml").write_text(PYPROJECT)
    (pkg / "mypkg" / "__init__.py").write_text("")
    (pkg / "mypkg" / "modes.py").write_text(MODES)
    (pkg / "mypkg" / "graders.py").write_text(GRADERS)
    (pkg / "mypkg" / "sources.py").write_text(SOURCES)
    env_dir = base / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(env_dir)
    python = env_dir / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    ours |= set(site.getsitepackages())
    # addsitedir, not a plain path line: the editable harness is itself a .pth in those folders
    lines = [f"import site; site.addsitedir({folder!r})" for folder in sorted(ours)]
    (Path(purelib) / "_harness_test_deps.pth").write_text("\n".join(lines) + "\n")
    subprocess.run(
        [python, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
         "--no-build-isolation", "--disable-pip-version-check", str(pkg)],
        check=True, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    return python


def harness_cli(python: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [python, "-m", "harness.cli", *args],
        capture_output=True, text=True, cwd=cwd, env=env, timeout=300,
    )  # fmt: skip


def test_plugins_lists_built_ins_and_the_package_with_origins(plugin_env: Path) -> None:
    done = harness_cli(plugin_env, "plugins", "--check", cwd=plugin_env.parent)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    greedy = next(line for line in lines if line.split()[:1] == ["greedy"])
    assert "mypkg.modes:Greedy" in greedy
    assert "entry point (mypkg-harness-plugin 0.1.0)" in greedy
    assert any(
        line.split()[:1] == ["shortest"] and "mypkg-harness-plugin" in line for line in lines
    )
    assert any(
        line.split()[:1] == ["countdown"] and "mypkg-harness-plugin" in line for line in lines
    )
    react = next(line for line in lines if line.split()[:1] == ["react"])
    assert react.rstrip().endswith("builtin")
    # the plug-in is not importable from the test's own environment: it lives in the venv only
    assert subprocess.run([sys.executable, "-c", "import mypkg"], capture_output=True).returncode


@pytest.mark.parametrize("mode", ["greedy", "mypkg.modes:Greedy"])
def test_harness_run_takes_the_plugin_mode_by_name_and_reference(
    plugin_env: Path, tmp_path: Path, mode: str
) -> None:
    db = tmp_path / "h.duckdb"
    done = harness_cli(
        plugin_env, "run", str(ROOT / "suites" / "arithmetic.yaml"), "--modes", f"react,{mode}",
        "--providers", "mock", "--tasks", "add-*", "--db", str(db), "--no-progress",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "SELECT mode, count(*), sum(passed::INT) FROM results GROUP BY mode ORDER BY mode"
        ).fetchall()
    modes = {m: (n, passed) for m, n, passed in rows}
    assert set(modes) == {"react", mode}
    assert modes[mode][0] == modes["react"][0] > 0
    assert modes[mode][1] == modes["react"][1]  # same scripted answers, same grades
    report = harness_cli(
        plugin_env, "report", "--db", str(db), "--out", str(tmp_path), cwd=tmp_path
    )
    assert report.returncode == 0, report.stderr
    text = (tmp_path / "report.md").read_text()
    assert mode in text
    assert "react" in text


def test_the_plugin_grader_and_source_by_name_and_reference(
    plugin_env: Path, tmp_path: Path
) -> None:
    suite = tmp_path / "short.yaml"
    suite.write_text(textwrap.dedent(SUITE))
    db = tmp_path / "h.duckdb"
    done = harness_cli(
        plugin_env, "run", str(suite), "countdown:3", "--providers", "mock", "--db", str(db),
        "--no-progress", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "SELECT suite, task_id, passed, grader_explanation FROM results ORDER BY suite, task_id"
        ).fetchall()
    got = {(s, t): (p, e) for s, t, p, e in rows}
    assert got[("short", "by-name")] == (True, "2 characters (at most 2)")
    assert got[("short", "by-reference")] == (False, "5 characters (at most 2)")
    assert [got[("countdown-3", f"next-{i}")][0] for i in range(3)] == [True, False, True]
    validated = harness_cli(plugin_env, "suites", "validate", "countdown:3", cwd=tmp_path)
    assert validated.returncode == 0, validated.stderr
    assert "countdown-3: 3 tasks" in validated.stdout
    row = (
        duckdb.connect(str(db), read_only=True).execute("SELECT config FROM bench_runs").fetchone()
    )
    assert row is not None
    config = json.loads(row[0])
    assert "countdown:3" in config["suite_files"]
