"""A run folder's pid file that is not a regular file does not hold ``harness run`` (stop 48).

``harness run`` removes, at every start, the run folders ``$TMPDIR/harness-run-*`` left by
killed runs, asking each folder's ``pid`` file whose process it was. The temporary folder is
shared by every local user: a FIFO planted as ``harness-run-x/pid`` held every ``harness run``
on the machine for ever, silently (the file was read with ``read_text``)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.bench._rundir import remove_stale

ROOT = Path(__file__).resolve().parents[2]


def _planted(root: Path, name: str, *, old: bool) -> Path:
    folder = root / f"harness-run-{name}"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "pid")
    if old:  # past the grace a folder without a readable pid file is given
        then = time.time() - 3600
        os.utime(folder, (then, then))
    return folder


@pytest.mark.timeout(60)
def test_a_fifo_as_a_run_folders_pid_file_is_not_read(tmp_path: Path) -> None:
    old = _planted(tmp_path, "old", old=True)
    new = _planted(tmp_path, "new", old=False)
    assert remove_stale(tmp_path) == [old]  # read as a folder without a pid file
    assert new.is_dir()


@pytest.mark.timeout(120)
def test_harness_run_starts_with_a_fifo_planted_in_the_temp_folder(tmp_path: Path) -> None:
    temp = tmp_path / "temp"
    _planted(temp, "planted", old=False)
    env = {**os.environ, "TMPDIR": str(temp), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", str(ROOT / "suites" / "arithmetic.yaml"),
         "--providers", "mock", "--modes", "react", "--tasks", "add-small", "--no-progress",
         "--db", str(tmp_path / "h.duckdb")],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=90,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "1/1 cells, 1 passed" in done.stdout + done.stderr


def test_a_killed_runs_folder_whose_pid_lives_on_is_removed(tmp_path: Path) -> None:
    """The same folder's pid, reused: a run killed in a container whose next life gave its pid
    to another process (pid 1 here) kept its folder, and every cell workspace in it, for ever."""
    code = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from harness.bench._rundir import RunFolder\n"
        "RunFolder('killed', Path(sys.argv[1]))\n"
        "os._exit(0)\n"  # killed: nothing removed
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], env=env, check=True, timeout=60)
    killed = tmp_path / "harness-run-killed"
    (killed / "cell-x").mkdir()
    (killed / "pid").write_text(f"1\n{os.uname().nodename}\n")  # pid 1 is alive
    assert remove_stale(tmp_path) == [killed]
    assert not killed.exists()


def test_a_live_runs_folder_is_kept_and_a_folder_without_a_lock_file_asks_the_pid(
    tmp_path: Path,
) -> None:
    from harness.bench._rundir import RunFolder

    live = RunFolder("live", tmp_path)
    older = tmp_path / "harness-run-older"  # a harness before the lock file: the pid is asked
    older.mkdir()
    (older / "pid").write_text(f"{os.getpid()}\n{os.uname().nodename}\n")
    try:
        assert remove_stale(tmp_path) == []
        assert live.path.is_dir()
        assert older.is_dir()
    finally:
        live.remove()
    assert not live.path.exists()
