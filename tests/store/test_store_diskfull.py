"""A full disk (harness/store/_diskfull.py): writes failing with ENOSPC or EDQUOT are tried again
with back-off while the disk stays full, up to the budget, then DiskFull; rows wait in memory
meanwhile and none is lost or written twice; a run given up on is closed `failed` naming the
disk. A real full file system with `harness run` is in tests/e2e/test_disk_full.py."""

from __future__ import annotations

import errno
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pytest

from harness.errors import DiskFull, StoreError
from harness.store import Store
from harness.store import _shards as shards
from harness.store._diskfull import DiskPatience, disk_full_wait_s, is_disk_full

RowFactory = Callable[..., dict[str, Any]]


def enospc() -> OSError:
    return OSError(errno.ENOSPC, "No space left on device")


class Flaky:
    """Fails with ``error`` ``n`` times, then returns ``value``."""

    def __init__(self, n: int, error: Callable[[], BaseException] = enospc) -> None:
        self.n = n
        self.error = error
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.calls <= self.n:
            raise self.error()
        return "done"


def test_is_disk_full_knows_the_ways_it_is_said() -> None:
    assert is_disk_full(enospc())
    assert is_disk_full(OSError(errno.EDQUOT, "Disk quota exceeded"))
    assert not is_disk_full(OSError(errno.EACCES, "Permission denied"))
    duck = duckdb.IOException('Could not write file "x.duckdb.wal": No space left on device')
    assert is_disk_full(duck)
    wrapped = StoreError("cannot open x")  # as the catalog wraps DuckDB's errors
    wrapped.__cause__ = duck
    assert is_disk_full(wrapped)
    assert not is_disk_full(ValueError("no"))


class Clock:
    """A clock for ``time.monotonic`` and ``time.sleep``: sleeping moves it on at once, and
    every pause is kept."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.now = 1000.0
        self.pauses: list[float] = []
        monkeypatch.setattr(time, "monotonic", lambda: self.now)
        monkeypatch.setattr(time, "sleep", self.sleep)

    def sleep(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.now += seconds


def test_a_transient_full_disk_is_waited_for(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    disk = DiskPatience(10)
    fn = Flaky(3)
    clock = Clock(monkeypatch)
    with caplog.at_level(logging.WARNING, logger="harness.store"):
        assert disk.call(fn, "writing x") == "done"
    assert fn.calls == 4
    assert clock.pauses == pytest.approx([0.1, 0.2, 0.4])  # doubling from FIRST_PAUSE_S
    assert not disk.full
    assert (disk.failures, disk.recovered) == (3, 1)
    assert "writing x: the disk is full" in caplog.text
    assert "the disk has room again" in caplog.text
    assert "nothing was lost" in caplog.text


def test_giving_up_after_the_budget_then_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    disk = DiskPatience(0.6)
    fn = Flaky(10**6)
    clock = Clock(monkeypatch)
    with pytest.raises(DiskFull, match=r"writing x: the disk stayed full for 0\.6s") as info:
        disk.call(fn, "writing x")
    assert clock.pauses == pytest.approx([0.1, 0.2, 0.3])  # the last pause cut to the budget
    assert "HARNESS_DISK_FULL_WAIT_S=0.6" in str(info.value)
    assert fn.calls == 4
    with pytest.raises(DiskFull, match="the disk stayed full for 0"):  # the same story
        disk.call(fn, "writing y")
    assert fn.calls == 5  # tried once: a run that gave up never waits twice
    assert len(clock.pauses) == 3  # and without a pause


def test_other_errors_are_not_retried() -> None:
    disk = DiskPatience(10)
    fn = Flaky(1, lambda: OSError(errno.EACCES, "Permission denied"))
    with pytest.raises(PermissionError):
        disk.call(fn, "writing x")
    assert fn.calls == 1
    assert not disk.full


def test_the_budget_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HARNESS_DISK_FULL_WAIT_S", raising=False)
    assert disk_full_wait_s() == 30.0
    monkeypatch.setenv("HARNESS_DISK_FULL_WAIT_S", "2.5")
    assert disk_full_wait_s() == 2.5
    assert disk_full_wait_s(7) == 7.0
    monkeypatch.setenv("HARNESS_DISK_FULL_WAIT_S", "soon")
    assert disk_full_wait_s() == 30.0


class FullFor:
    """Replaces the shard writer's file write: ENOSPC for the first ``writes`` writes (counted,
    not timed: a loaded machine sees the same faults)."""

    def __init__(self, writes: int) -> None:
        self.writes = writes
        self.failed = 0
        self.real = shards._write_atomic

    def __call__(self, table: Any, dest: Path, *, fsync: bool) -> None:
        if self.failed < self.writes:
            self.failed += 1
            raise enospc()
        self.real(table, dest, fsync=fsync)


def _per_cell(db: Path) -> dict[str, int]:
    with Store.open(db, read_only=True) as ro:
        rows = ro.con.execute("SELECT task_id, count(*) FROM results GROUP BY 1").fetchall()
    return {str(k): int(n) for k, n in rows}


def test_rows_wait_in_memory_while_the_disk_is_full(
    db_path: Path, make_row: RowFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    full = FullFor(3)
    with Store.open(db_path, flush_after_s=0.1, disk_full_wait_s=20) as store:
        run = store.begin_run(label="L")
        monkeypatch.setattr(shards, "_write_atomic", full)
        for i in range(200):
            store.write_result(make_row(run, f"t{i}"))  # never raises while within the budget
            time.sleep(0.01)
        store.finish_run(run)
    assert full.failed == 3  # the background thread met the full disk, and tried again
    counts = _per_cell(db_path)
    assert len(counts) == 200
    assert set(counts.values()) == {1}
    with Store.open(db_path, read_only=True) as ro:
        assert ro.con.execute("SELECT status, error FROM bench_runs").fetchall() == [
            ("finished", None)
        ]


def test_a_disk_full_past_the_budget_fails_the_run_naming_the_disk(
    db_path: Path, make_row: RowFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store.open(db_path, flush_after_s=0.1, disk_full_wait_s=0.5)
    run = store.begin_run(label="L")
    store.write_result(make_row(run, "kept"))
    store.shards.flush()  # type: ignore[union-attr]
    monkeypatch.setattr(shards, "_write_atomic", FullFor(10**9))
    given_up: DiskFull | None = None
    for i in range(1000):  # queued in memory until the budget is spent, then DiskFull
        try:
            store.write_result(make_row(run, f"t{i}"))
        except DiskFull as exc:
            given_up = exc
            break
        time.sleep(0.01)
    assert given_up is not None
    assert "the disk stayed full for " in str(given_up)
    assert "HARNESS_DISK_FULL_WAIT_S=0.5" in str(given_up)
    with pytest.raises(DiskFull):
        store.finish_run(run)  # the queued rows are lost; the run says why
    with pytest.raises(DiskFull):
        store.close()
    with Store.open(db_path, read_only=True) as ro:
        ((status, error),) = ro.con.execute("SELECT status, error FROM bench_runs").fetchall()
    assert status == "failed"
    assert "the disk stayed full" in error
    assert _per_cell(db_path) == {"kept": 1}
    monkeypatch.undo()
    with Store.open(db_path) as store:  # resumable, and the label free
        again = store.begin_run(label="L", resume=True)
        assert again == run
        store.write_result(make_row(run, "t0"))
        store.finish_run(run)
    assert _per_cell(db_path) == {"kept": 1, "t0": 1}


def test_a_writer_keeps_a_reserve_to_close_a_run_on_a_full_disk(db_path: Path) -> None:
    with Store.open(db_path):
        pass
    reserve = db_path.parent / "runs" / "_reserve"
    assert reserve.stat().st_size == 1024 * 1024
