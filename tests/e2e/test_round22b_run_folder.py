"""Every `harness run` looks at each ``$TMPDIR/harness-run-*/pid`` to remove the folders of
killed runs, and read the file with ``read_text`` (adversary round 22, part B): a FIFO there
(in ``/tmp`` any local user can make one) held every `harness run` on the machine for ever
before it started; a pid past a C long (``99999999999999999999``) ended every run in an
``OverflowError`` traceback, exit 1. Each test fails on 0624268."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

SUITE = Path(__file__).resolve().parents[2] / "suites" / "arithmetic.yaml"


def _run(tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "TMPDIR": str(tmp_path / "t")}
    args = ["run", str(SUITE), "--providers", "mock", "--modes", "react", "--tasks", "add-small",
            "--db", str(tmp_path / "h.duckdb"), "--no-progress"]  # fmt: skip
    try:
        return subprocess.run(
            [sys.executable, "-m", "harness.cli", *args], capture_output=True, text=True,
            timeout=60, env=env, cwd=tmp_path,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail("harness run never started: it waits on the FIFO")


@pytest.mark.timeout(120)
def test_a_fifo_as_another_runs_pid_file_is_not_waited_on(tmp_path: Path) -> None:
    folder = tmp_path / "t" / "harness-run-someone-elses"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "pid")
    done = _run(tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "1/1 cells, 1 passed" in done.stdout + done.stderr


@pytest.mark.timeout(120)
@pytest.mark.parametrize("pid", ["99999999999999999999", "0", "-1"])
def test_a_pid_no_process_can_have_is_a_dead_run(tmp_path: Path, pid: str) -> None:
    folder = tmp_path / "t" / "harness-run-killed"
    folder.mkdir(parents=True)
    (folder / "pid").write_text(f"{pid}\n{socket.gethostname()}\n")
    done = _run(tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert not folder.exists()  # removed as a killed run's
