"""A run whose process is gone counts as running no longer when its pid is another process's
(issue 34; round 21 part B's found-not-fixed, fixed by the lead in stop 47).

``bench_runs`` names a run's process by pid; a run killed in a container whose next life gave
that pid (pid 1, say) to another process counted as running for ever: ``baseline save``
refused it ("it is still running (process 1)") and the store never closed it. Now the run's
process holds an ``flock`` on ``runs/_alive/<run>.lock`` for the run's life, which the kernel
drops however the process ends; the pid is asked only without that file."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from harness.cli import main
from harness.store import Store
from harness.store._shards import runs_dir
from tests.e2e.edited_store import edited, store_two_cells
from tests.store.test_store_labels import CHILD  # a run begun, then a fork, then death


def _run_id(db: Path) -> str:
    with duckdb.connect(str(db), read_only=True) as con:
        row = con.execute("SELECT run_id FROM bench_runs").fetchone()
    assert row is not None
    return str(row[0])


def _killed(db: Path) -> None:
    """Leave what a run's process killed with the run open leaves: its lock file, unheld (a
    run that ends removes it)."""
    from harness.store._alive import AliveLock

    held = AliveLock.hold(runs_dir(db), _run_id(db))
    assert held is not None
    held.release()


def test_a_dead_run_whose_pid_lives_on_is_not_running(tmp_path: Path) -> None:
    stored = store_two_cells(tmp_path / "stored")
    # The process died with the run open, and pid 1 is alive (a container's init): reused.
    db = edited(stored, tmp_path / "db", "UPDATE bench_runs SET status = 'running', pid = 1")
    _killed(db)
    done = CliRunner().invoke(main, ["baseline", "save", "--db", str(db), "-o",
                                     str(tmp_path / "b.json")])  # fmt: skip
    assert "still running" not in done.output, done.output  # "(process 1)" before
    assert "interrupted" in done.output, done.output
    Store.open(db).close()  # a store opened to write closes the runs whose process is gone
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT status FROM bench_runs").fetchone() == ("interrupted",)


def test_a_run_whose_process_holds_its_lock_is_running(tmp_path: Path) -> None:
    from harness.store._alive import AliveLock, alive

    stored = store_two_cells(tmp_path / "stored")
    db = edited(stored, tmp_path / "db", "UPDATE bench_runs SET status = 'running', pid = 1")
    run_id = _run_id(db)
    held = AliveLock.hold(runs_dir(db), run_id)  # this process, as the run's own would
    assert held is not None
    try:
        assert alive(runs_dir(db), run_id) is True
        done = CliRunner().invoke(main, ["baseline", "save", "--db", str(db), "-o",
                                         str(tmp_path / "b.json")])  # fmt: skip
        assert done.exit_code == 2, done.output
        assert "still running" in done.output, done.output
    finally:
        held.release()
    assert alive(runs_dir(db), run_id) is False


def test_without_a_lock_file_the_pid_is_asked(tmp_path: Path) -> None:
    from harness.store._alive import alive

    assert alive(tmp_path / "runs", "no-such-run") is None
    stored = store_two_cells(tmp_path / "stored")
    db = edited(stored, tmp_path / "db",
                f"UPDATE bench_runs SET status = 'running', pid = {os.getpid()}")  # fmt: skip
    for lock in (runs_dir(db) / "_alive").iterdir():  # a run of a harness without the locks
        lock.unlink()
    done = CliRunner().invoke(main, ["baseline", "save", "--db", str(db), "-o",
                                     str(tmp_path / "b.json")])  # fmt: skip
    assert "still running" in done.output, done.output  # this process is alive


@pytest.mark.slow
def test_a_forked_child_outliving_its_parent_does_not_keep_the_run_alive(tmp_path: Path) -> None:
    from harness.store._alive import alive

    db, done = tmp_path / "h.duckdb", tmp_path / "child-may-end"
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(CHILD), str(db), str(done)],
        cwd=Path(__file__).resolve().parents[2], capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    try:
        assert proc.stdout.strip() == "forked", proc.stderr
        # The parent died with its run open; its child (a worker) lives on with a copy of
        # every descriptor the parent had, the run's lock file's among them.
        assert alive(runs_dir(db), _run_id(db)) is False
    finally:
        done.touch()
