"""Python graders run in a child process: a timeout stops them, every BaseException is contained,
and they import from the suite file's folder."""

from __future__ import annotations

import textwrap
import threading
import time
from pathlib import Path

import pytest

import harness
from harness.grading import Grade, Grader, grade, parse_grader
from harness.grading import _python as python_grader
from harness.providers._mock import MockProvider
from harness.suites._load import load_suite

#: Spawns processes, sandboxes, browsers, clusters or servers (the fast loop skips it).
pytestmark = pytest.mark.slow

CHECKS = """
import os, sys, time

def ok(result, workspace):
    print("noise on stdout must not spoil the verdict")
    return "395" in (result.text or ""), "looked for 395"

def exits(result, workspace):
    sys.exit(0)

def interrupts(result, workspace):
    raise KeyboardInterrupt

def dies(result, workspace):
    os._exit(7)

def loops(result, workspace):
    while True:
        pass

def sleeps(result, workspace):
    time.sleep(0.3)
    return True

def pid(result, workspace):
    return True, f"pid {os.getpid()}"

def reads_stdin(result, workspace):
    return sys.stdin.read() == "", "stdin is empty"

def sees_workspace(result, workspace):
    return (workspace / "marker.txt").read_text() == "yes"
"""


@pytest.fixture(scope="module")
def result() -> harness.Result:
    return harness.run("17*23+4?", provider=MockProvider([{"text": "395"}]))


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "my_checks.py").write_text(textwrap.dedent(CHECKS))
    return tmp_path


def python(folder: Path, name: str, **fields: object) -> Grader:
    grader = parse_grader({"kind": "python", "function": f"my_checks:{name}", **fields})
    grader.with_base_dir(folder)
    return grader


def test_python_grader_passes_and_ignores_its_stdout(folder: Path, result: harness.Result) -> None:
    got = grade(python(folder, "ok"), result)
    assert (got.passed, got.error, got.explanation) == (True, False, "looked for 395")


def test_python_grader_gets_the_workspace_path(
    folder: Path, result: harness.Result, tmp_path: Path
) -> None:
    (tmp_path / "marker.txt").write_text("yes")
    assert grade(python(folder, "sees_workspace"), result, tmp_path).passed


def test_python_grader_systemexit_is_error_cell(folder: Path, result: harness.Result) -> None:
    got = grade(python(folder, "exits"), result)
    assert got.error
    assert not got.passed
    assert "SystemExit" in got.explanation


def test_python_grader_keyboardinterrupt_is_error_cell(
    folder: Path, result: harness.Result
) -> None:
    got = grade(python(folder, "interrupts"), result)
    assert got.error
    assert "KeyboardInterrupt" in got.explanation


def test_python_grader_hard_exit_is_error_cell(folder: Path, result: harness.Result) -> None:
    got = grade(python(folder, "dies"), result)
    assert got.error
    assert "exit status 7" in got.explanation


def test_python_grader_timeout_is_error_cell(folder: Path, result: harness.Result) -> None:
    got = grade(python(folder, "loops", timeout_s=1), result)  # "loops" never returns
    assert got.error
    assert "timed out after 1s" in got.explanation


def test_python_grader_within_its_timeout_passes(folder: Path, result: harness.Result) -> None:
    assert grade(python(folder, "sleeps", timeout_s=5), result).passed


def test_python_grader_default_timeout_is_30s() -> None:
    assert python_grader.DEFAULT_TIMEOUT_S == 30.0
    with pytest.raises(ValueError, match="timeout_s"):
        parse_grader({"kind": "python", "function": "a:b", "timeout_s": 0})
    with pytest.raises(ValueError, match="not used by contains"):
        parse_grader({"kind": "contains", "value": "x", "timeout_s": 3})


def test_python_grader_stopped_by_terminate_all(folder: Path, result: harness.Result) -> None:
    """What Ctrl-C does: the runner calls terminate_all, and a looping grader ends at once."""
    got: list[object] = []
    worker = threading.Thread(target=lambda: got.append(grade(python(folder, "loops"), result)))
    worker.start()
    time.sleep(1.0)  # the child is running its loop
    try:
        assert python_grader.terminate_all() == 1
        worker.join(60)  # a guard against a hang, not a measure
        assert not worker.is_alive()
        verdict = got[0]
        assert isinstance(verdict, Grade)
        assert verdict.error
        assert "timed out" not in verdict.explanation  # stopped, not its 30 s timeout
        # Stopped: no new grader starts until the next run resets.
        assert grade(python(folder, "ok"), result).error
    finally:
        python_grader.reset()
    assert grade(python(folder, "ok"), result).passed


def test_python_graders_import_from_the_suite_folder(
    tmp_path: Path, result: harness.Result
) -> None:
    (tmp_path / "suite_local_checks.py").write_text("def check(result, ws):\n    return True\n")
    (tmp_path / "s.yaml").write_text(
        "suite: local\ntasks:\n  - id: t\n    prompt: p\n"
        "    expect: {kind: python, function: 'suite_local_checks:check', timeout_s: 5}\n"
    )
    suite = load_suite(tmp_path / "s.yaml")
    expect = suite.tasks[0].expect
    assert expect.base_dir == tmp_path.resolve()
    assert isinstance(expect, python_grader.PythonGrader)
    assert expect.timeout_s == 5
    assert grade(expect, result).passed


def test_check_imports_lists_missing_graders(folder: Path) -> None:
    problems = python_grader.check_imports(
        [("my_checks:ok", folder), ("my_checks:nope", folder), ("no_such_mod_q:f", folder)]
    )
    assert len(problems) == 2
    assert any("my_checks:nope" in p and "AttributeError" in p for p in problems)
    assert any("no_such_mod_q:f" in p and "ModuleNotFoundError" in p for p in problems)
    assert python_grader.check_imports([("my_checks:ok", folder)]) == []


def test_python_grader_workers_are_reused_and_survive_exceptions(
    folder: Path, result: harness.Result
) -> None:
    first = grade(python(folder, "pid"), result).explanation
    assert grade(python(folder, "exits"), result).error  # SystemExit: contained in the worker
    assert grade(python(folder, "pid"), result).explanation == first
    assert grade(python(folder, "dies"), result).error  # os._exit: that worker is gone
    assert grade(python(folder, "pid"), result).passed


def test_python_graders_of_two_suites_never_share_a_module(
    tmp_path: Path, result: harness.Result
) -> None:
    graders = []
    for name, verdict in (("one", True), ("two", False)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "same_name_checks.py").write_text(
            f"def check(result, ws):\n    return {verdict}\n"
        )
        grader = parse_grader({"kind": "python", "function": "same_name_checks:check"})
        grader.with_base_dir(tmp_path / name)
        graders.append(grader)
    assert [grade(g, result).passed for g in graders * 2] == [True, False, True, False]


def test_python_grader_reading_stdin_gets_nothing(folder: Path, result: harness.Result) -> None:
    assert grade(python(folder, "reads_stdin"), result).passed
    assert grade(python(folder, "ok"), result).passed  # the request stream was not touched
