"""`harness run` exit codes for faults, through real subprocesses: python graders that exit, loop
or cannot be imported, unwritable output paths, repeated names, missing keys."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import pytest

#: Spawns processes, sandboxes, browsers, clusters or servers (the fast loop skips it).
pytestmark = pytest.mark.slow

SUITE = """
suite: faulty
defaults: {tools: [calculator], max_iterations: 4}
tasks:
  - id: plain
    prompt: "What is 2+2?"
    expect: {kind: contains, value: "4"}
    mock: {turns: [{text: "4"}]}
  - id: graded
    prompt: "What is 3*3?"
    expect: {kind: python, function: "fault_checks:GRADER", timeout_s: TIMEOUT}
    mock: {turns: [{text: "9"}]}
"""

CHECKS = """
import pathlib, sys

def exits(result, workspace):
    sys.exit(1)

def loops(result, workspace):
    (pathlib.Path(__file__).parent / "grading").touch()
    while True:
        pass

def fine(result, workspace):
    return "9" in (result.text or "")
"""


def project(tmp_path: Path, grader: str, timeout: int = 30) -> Path:
    suite = SUITE.replace("GRADER", grader).replace("TIMEOUT", str(timeout))
    (tmp_path / "faulty.yaml").write_text(suite)
    (tmp_path / "fault_checks.py").write_text(textwrap.dedent(CHECKS))
    return tmp_path / "faulty.yaml"


def cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "harness.cli", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "300", **(env or {})},
    )


def finish(proc: subprocess.Popen[str]) -> tuple[int, str]:
    _, err = proc.communicate(timeout=120)
    return proc.returncode, err


def query(db: Path, sql: str) -> list[tuple[object, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


RUN = ("run", "faulty.yaml", "--providers", "mock", "--modes", "react", "--no-progress")


def test_python_grader_systemexit_is_error_cell_exit_3(tmp_path: Path) -> None:
    project(tmp_path, "exits")
    code, err = finish(cli(*RUN, cwd=tmp_path))
    assert code == 3, err
    assert "1 errored" in err
    assert "faulty/graded/react/mock/e0" in err
    assert "SystemExit" in err
    db = tmp_path / "reports" / "harness.duckdb"
    assert query(
        db,
        "SELECT task_id, status, coalesce(error LIKE '%SystemExit%', false) "
        "FROM results ORDER BY 1",
    ) == [
        ("graded", "error", True),
        ("plain", "passed", False),
    ]
    assert query(db, "SELECT status FROM bench_runs") == [("finished",)]


def test_python_grader_timeout_is_error_cell_exit_3(tmp_path: Path) -> None:
    project(tmp_path, "loops", timeout=1)
    code, err = finish(cli(*RUN, cwd=tmp_path))  # "loops" never returns
    assert code == 3, err
    assert "timed out after 1s" in err


def test_python_grader_loop_ctrl_c_exits_130(tmp_path: Path) -> None:
    project(tmp_path, "loops")
    proc = cli(*RUN, "--concurrency", "1", cwd=tmp_path)
    deadline = time.monotonic() + 60
    while not (tmp_path / "grading").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (tmp_path / "grading").exists(), "the grader never started"
    proc.send_signal(signal.SIGINT)
    try:  # the grader loops for ever (past its 30 s timeout): only Ctrl-C ends this run
        proc.wait(timeout=60)  # a guard against a hang, not a measure
    finally:
        code, err = finish(proc)
    assert code == 130, err
    assert "timed out" not in err
    assert query(tmp_path / "reports" / "harness.duckdb", "SELECT status FROM bench_runs") == [
        ("interrupted",)
    ]


def test_unimportable_python_grader_exits_2_before_any_cell(tmp_path: Path) -> None:
    project(tmp_path, "no_such_function")
    code, err = finish(cli(*RUN, cwd=tmp_path))
    assert code == 2, err
    assert "fault_checks:no_such_function" in err
    assert "task 'graded'" in err
    assert not (tmp_path / "reports").exists()
    validate = cli("suites", "validate", "faulty.yaml", cwd=tmp_path)
    code, err = finish(validate)
    assert code == 2
    assert "AttributeError" in err


def test_unwritable_trace_file_exits_2_without_run_row(tmp_path: Path) -> None:
    project(tmp_path, "fine")
    code, err = finish(cli(*RUN, cwd=tmp_path))
    assert code == 0, err
    (tmp_path / "a-file").write_text("not a folder")
    code, err = finish(cli(*RUN, "--trace-file", "a-file/trace.jsonl", cwd=tmp_path))
    assert code == 2, err
    assert "--trace-file a-file/trace.jsonl" in err
    assert "Traceback" not in err
    db = tmp_path / "reports" / "harness.duckdb"
    assert query(db, "SELECT count(*), min(status) FROM bench_runs") == [(1, "finished")]


def test_unwritable_db_exits_2(tmp_path: Path) -> None:
    project(tmp_path, "fine")
    (tmp_path / "a-file").write_text("not a folder")
    code, err = finish(cli(*RUN, "--db", "a-file/h.duckdb", cwd=tmp_path))
    assert code == 2, err
    assert "--db a-file/h.duckdb" in err


def test_duplicate_modes_removed(tmp_path: Path) -> None:
    project(tmp_path, "fine")
    args = ("run", "faulty.yaml", ".", "--modes", "react,react", "--providers",
            "mock,mock", "--no-progress")  # fmt: skip
    code, err = finish(cli(*args, cwd=tmp_path))
    assert code == 0, err
    assert "suite file(s) named more than once" in err
    assert "--modes names 'react' 2 times" in err
    assert "--providers names 'mock' 2 times" in err
    db = tmp_path / "reports" / "harness.duckdb"
    assert query(db, "SELECT count(*), count(DISTINCT cell_key) FROM results") == [(2, 2)]


@pytest.mark.parametrize("record_mode", ["once", "all"])
def test_missing_api_key_when_recording_exits_2(tmp_path: Path, record_mode: str) -> None:
    project(tmp_path, "fine")
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "run", "faulty.yaml", "--providers",
         "openai:gpt-4o-mini", "--record-mode", record_mode, "--no-progress"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    code, err = finish(proc)
    assert code == 2, err
    assert "OPENAI_API_KEY" in err
    assert not (tmp_path / "reports").exists()
