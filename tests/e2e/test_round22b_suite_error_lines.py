"""Rounds 20 and 21 cut the CLI's `fail`, `warn` and `echo_line` lines to 2,000 characters;
a suite's errors name the value they refuse and were printed whole (adversary round 22, part
B): a task id or a grader kind of 1 MB printed a line of 1,000,136 characters from `suites
validate`, `suites audit` and `harness run`, and a label lock's holder (a file under
``runs/_labels/``) of 1 MB the same from `harness run --label`. Each line now keeps its start
and its end (what is wrong), and the number of errors is unchanged. Fails on 0624268."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SUITE = Path(__file__).resolve().parents[2] / "suites" / "arithmetic.yaml"
BIG = 1_000_000


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args], capture_output=True, text=True,
        timeout=120, env=env, cwd=cwd,
    )  # fmt: skip


def _suite(tmp_path: Path) -> Path:
    path = tmp_path / "big.yaml"
    path.write_text(
        "suite: big\ntasks:\n"
        f"  - id: {'v' * BIG}\n    prompt: x\n    expect: {{kind: contains, value: x}}\n"
        f"  - id: t2\n    prompt: x\n    expect: {{kind: {'k' * BIG}}}\n",
        encoding="utf-8",
    )
    return path


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "command",
    [
        ["suites", "validate"],
        ["suites", "audit"],
        ["run", "--providers", "mock", "--modes", "react", "--no-progress"],
    ],
)
def test_a_suites_errors_are_cut_lines(tmp_path: Path, command: list[str]) -> None:
    done = _cli([*command, str(_suite(tmp_path))], tmp_path)
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.splitlines()
    assert len(lines) == 2, lines
    assert all(len(line) <= 2_000 for line in lines), [len(line) for line in lines]
    assert "at most 100 characters" in lines[0]  # what is wrong: kept at the end
    assert "unknown grader kind" in lines[1]


@pytest.mark.timeout(300)
def test_a_label_locks_holder_of_a_megabyte_is_a_cut_line(tmp_path: Path) -> None:
    label = "nightly"
    digest = hashlib.sha256(label.encode()).hexdigest()[:12]
    lock = tmp_path / "runs" / "_labels" / f"{label}-{digest}.lock"
    lock.parent.mkdir(parents=True)
    lock.write_text(json.dumps({"pid": 7, "host": "h" * BIG, "run_id": "r", "started": "s"}))
    fd = os.open(lock, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # another process runs the label
        done = _cli(["run", str(SUITE), "--providers", "mock", "--modes", "react", "--tasks",
                     "add-small", "--db", str(tmp_path / "h.duckdb"), "--no-progress",
                     "--label", label], tmp_path)  # fmt: skip
    finally:
        os.close(fd)
    assert done.returncode == 2, done.stderr[-2000:]
    (line,) = done.stderr.splitlines()
    assert len(line) <= 2_000
    assert line.startswith("error: label 'nightly' is being run by pid 7 on hhh")
    assert line.endswith("wait for it to end, or use another --label")
