"""A run's liveness lock file goes once the run is recorded as ended (stop 48).

Each run's process holds an ``flock`` on ``runs/_alive/<digest>.lock`` for the run's life
(stop 47, :mod:`harness.store._alive`); the files stayed when the runs ended, one per run for
ever. Now a run that ends removes its file while it still holds it, and a writer closing a
dead run removes that run's file; a taker checks that the file it locked is still the one at
the path, so a removal never leaves two holders."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from harness.store import Store
from harness.store._shards import runs_dir
from tests.e2e.edited_store import edited, store_two_cells

ROOT = Path(__file__).resolve().parents[2]


def _locks(db: Path) -> list[Path]:
    folder = runs_dir(db) / "_alive"
    return sorted(folder.iterdir()) if folder.is_dir() else []


def _run_id(db: Path) -> str:
    with duckdb.connect(str(db), read_only=True) as con:
        row = con.execute("SELECT run_id FROM bench_runs").fetchone()
    assert row is not None
    return str(row[0])


def test_runs_that_end_leave_no_lock_files(tmp_path: Path) -> None:
    db = tmp_path / "h.duckdb"
    with Store.open(db) as store:
        for n in range(3):
            run = store.begin_run(label=f"l{n}")
            assert len(_locks(db)) == 1  # held while the run is open
            store.finish_run(run, "finished")
    assert _locks(db) == []  # three runs ended: three files before


def test_a_dead_run_closed_by_a_writer_loses_its_lock_file(tmp_path: Path) -> None:
    from harness.store._alive import AliveLock, alive

    stored = store_two_cells(tmp_path / "stored")
    db = edited(stored, tmp_path / "db", "UPDATE bench_runs SET status = 'running', pid = 1")
    run_id = _run_id(db)
    held = AliveLock.hold(runs_dir(db), run_id)  # what a killed run leaves: its file, unheld
    assert held is not None
    held.release()
    assert len(_locks(db)) == 1
    assert alive(runs_dir(db), run_id) is False
    Store.open(db).close()  # a writer closes the runs whose process is gone
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT status FROM bench_runs").fetchone() == ("interrupted",)
    assert _locks(db) == []


def test_a_file_removed_under_its_taker_is_taken_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from harness import _files
    from harness.store import _alive

    runs = tmp_path / "runs"
    first = _alive.AliveLock.hold(runs, "r1")
    assert first is not None

    def racing(path: str, flags: int, mode: int = 0o666, **kw: bool) -> int:
        fd = _files.open_regular(path, flags, mode, **kw)
        if flags & os.O_CREAT:
            first.release(remove=True)  # the run ends between the taker's open and its lock
        return fd

    with monkeypatch.context() as patched:
        patched.setattr(_alive, "open_regular", racing)
        second = _alive.AliveLock.hold(runs, "r1")
    assert second is not None  # it locked the removed file first, then the new one
    try:
        assert _alive.alive(runs, "r1") is True  # the file at the path is the held one
        assert _alive.AliveLock.hold(runs, "r1") is None  # one holder only
    finally:
        second.release(remove=True)
    assert _alive.alive(runs, "r1") is None  # no file: the pid would be asked


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root")
def test_a_lock_file_another_user_made_can_be_held() -> None:
    """A store shared by two users: the lock file one made (mode 0644) could not be opened for
    writing by the other, whose run then took no lock and counted as dead (round 22 B). A lock
    needs only a descriptor: the file is opened to read."""
    import tempfile

    from harness.store._alive import AliveLock

    shared = Path(tempfile.mkdtemp(prefix="harness-test-shared-"))  # (pytest's are root's only)
    runs = shared / "runs"
    lock = AliveLock.hold(runs, "R1")  # made by this user (root), mode 0644
    assert lock is not None
    lock.release()  # (kept: not recorded as ended)
    for folder in (shared, runs, runs / "_alive"):
        folder.chmod(0o777)
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from harness.store._alive import AliveLock\n"
        "held = AliveLock.hold(Path(sys.argv[1]), 'R1')\n"
        "print('held' if held is not None else 'none')\n"
    )
    done = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
         sys.executable, "-c", code, str(runs)],
        env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    shutil.rmtree(shared)
    assert done.stdout.strip() == "held", done.stderr
