"""Readers are never locked out, writers share the file, and a killed run keeps every cell that
finished more than a second before the kill (real subprocesses, a real DuckDB file)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pytest

from harness.store import Store, StoreLocked, results_df, runs_df
from harness.store._shards import shard_files

HOLD_RAW = """
import sys, duckdb
con = duckdb.connect(sys.argv[1], read_only=sys.argv[2] == "ro")
print("ready", flush=True)
sys.stdin.read()
"""

# Opens the file read-only the moment it exists, once, and prints what it read or the error.
WAIT_THEN_READ = """
import os, sys, duckdb
print("waiting", flush=True)
while not os.path.exists(sys.argv[1]):
    pass
try:
    con = duckdb.connect(sys.argv[1], read_only=True)
    print(con.execute("SELECT count(*) FROM results").fetchone())
except duckdb.Error as exc:
    print(repr(exc))
"""

# Writes a cell every 5 ms and prints its number and the time once write_result returned.
WRITE_FOREVER = """
import sys, time
from harness.store import Store
s = Store.open(sys.argv[1])
run = s.begin_run(label="killed", run_id="K")
i = 0
while True:
    s.write_result({"run_id": run, "suite": "s", "task_id": f"t{i:05d}", "mode": "react",
                    "provider": "mock", "epoch": 0, "passed": i % 2 == 0, "cost_usd": 0.5})
    print(i, time.time(), flush=True)
    i += 1
    time.sleep(0.005)
"""


@contextmanager
def holder(script: str, db: Path, *args: str) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-c", script, str(db), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        yield proc
    finally:
        if proc.stdin:
            proc.stdin.close()
        proc.wait(timeout=30)


@contextmanager
def writing(db: Path) -> Iterator[tuple[subprocess.Popen[str], list[tuple[int, float]]]]:
    """A process writing cells forever into run ``K``; yields it and what it printed so far."""
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITE_FOREVER, str(db)], stdout=subprocess.PIPE, text=True
    )
    printed: list[tuple[int, float]] = []
    try:
        yield proc, printed
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)


def read_until(proc: subprocess.Popen[str], printed: list[tuple[int, float]], n: int) -> None:
    assert proc.stdout is not None
    while not printed or printed[-1][0] < n:
        line = proc.stdout.readline()
        assert line, "the writer died"
        i, t = line.split()
        printed.append((int(i), float(t)))


@pytest.mark.slow
def test_readers_and_a_second_writer_get_in_while_a_run_writes(db_path: Path) -> None:
    Store.open(db_path).close()
    with writing(db_path) as (proc, printed):
        read_until(proc, printed, 50)
        time.sleep(1.0)  # those 50 are on disk by now
        seen = []
        for _ in range(3):  # the run keeps writing; every read sees more
            with Store.open(db_path, read_only=True) as ro:
                seen.append(len(results_df(ro, "K")))
                assert runs_df(ro)["status"].tolist() == ["running"]
            raw = duckdb.connect(str(db_path), read_only=True)  # a user's read-only shell
            try:
                got = raw.execute("SELECT count(*) FROM results WHERE run_id = 'K'").fetchone()
                assert got is not None
                assert got[0] >= seen[-1]
            finally:
                raw.close()
            read_until(proc, printed, printed[-1][0] + 150)
        assert seen == sorted(seen)
        assert seen[-1] > seen[0] >= 50
        with Store.open(db_path) as other:  # a second writer, at the same time
            run = other.begin_run(label="other")
            other.write_result({"run_id": run, "suite": "s", "task_id": "x", "mode": "react",
                                "provider": "mock", "epoch": 0, "passed": True})  # fmt: skip
        assert proc.poll() is None  # the first writer was not disturbed
    with Store.open(db_path, read_only=True) as ro:
        assert len(results_df(ro, run)) == 1


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["rw", "ro"])
def test_a_program_holding_the_file_is_named(db_path: Path, mode: str) -> None:
    """Another program (the duckdb CLI, a notebook) holds the file past the wait."""
    Store.open(db_path).close()
    with holder(HOLD_RAW, db_path, mode) as proc:
        started = time.monotonic()
        with pytest.raises(StoreLocked, match=f"in use by PID {proc.pid} ") as caught:
            Store.open(db_path, lock_timeout_s=0.5)
        assert caught.value.pid == proc.pid
        assert time.monotonic() - started >= 0.5  # it waited first
        if mode == "ro":  # readers share the file
            with Store.open(db_path, read_only=True) as ro:
                assert runs_df(ro).empty


def test_another_duckdb_connection_in_this_process(db_path: Path) -> None:
    Store.open(db_path).close()
    raw = duckdb.connect(str(db_path), read_only=True)
    try:
        with pytest.raises(StoreLocked, match="this process"):
            Store.open(db_path)
    finally:
        raw.close()


@pytest.mark.slow
def test_a_run_ending_while_a_reader_holds_the_file_is_recorded_later(
    db_path: Path, make_row: object
) -> None:
    store = Store.open(db_path, lock_timeout_s=0.3)
    run = store.begin_run(label="L")
    store.write_result({"run_id": run, "suite": "s", "task_id": "t", "mode": "react",
                        "provider": "mock", "epoch": 0, "passed": True})  # fmt: skip
    with holder(HOLD_RAW, db_path, "ro"):
        store.finish_run(run, "finished")  # cannot get in: written beside the shards
        store.close()
        assert (
            json.loads((db_path.parent / "runs" / run / "finish.json").read_text())["status"]
            == "finished"
        )
    with Store.open(db_path) as again:  # the next writer records it
        assert runs_df(again)["status"].tolist() == ["finished"]
        again.release()
        assert again.compact().results == 1
    assert not (db_path.parent / "runs" / run).exists()


@pytest.mark.slow
def test_sigkill_loses_at_most_the_last_second_and_duplicates_nothing(db_path: Path) -> None:
    with writing(db_path) as (proc, printed):
        read_until(proc, printed, 400)
        os.kill(proc.pid, signal.SIGKILL)
        killed_at = time.time()
        proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        assert proc.stdout is not None
        for line in proc.stdout.read().splitlines():
            i, t = line.split()
            printed.append((int(i), float(t)))
    old = [i for i, t in printed if t < killed_at - 1.0]
    assert len(old) > 100
    with Store.open(db_path, read_only=True) as ro:
        df = results_df(ro, "K")
        assert runs_df(ro)["status"].tolist() == ["running"]  # a reader changes nothing
    got = [int(t[1:]) for t in df["task_id"]]
    assert got == list(range(len(got)))  # a prefix of what was written, each cell once
    assert len(got) >= len(old)  # everything that finished more than 1 s before the kill
    assert len(got) <= printed[-1][0] + 2
    assert df["cost_usd"].sum() == 0.5 * len(df)
    # The next writer closes the dead run as interrupted, finished at its last result, and
    # compaction moves the shards into the table without losing or repeating a row.
    with Store.open(db_path) as store:
        run = runs_df(store).iloc[0]
        assert run["status"] == "interrupted"
        assert run["finished_at"] == df["finished_at"].max()
        assert f"process {proc.pid} stopped" in run["error"]
        store.release()
        stats = store.compact()
        assert (stats.runs, stats.results) == (1, len(df))
        assert store.existing_cells("killed") == set(df["cell_key"])
        assert len(results_df(store, "K", latest_only=False)) == len(df)
        store.release()
        assert store.compact().results == 0  # a second compaction adds nothing
    assert not shard_files(db_path.parent / "runs" / "K", "results")


@pytest.mark.slow
def test_a_new_database_appears_whole_so_a_reader_that_sees_it_can_open_it(
    tmp_path: Path,
) -> None:
    """The writer builds a new file under a hidden name and links it into place: another process
    that opens the file the instant it exists is not refused by the creation's lock."""
    db = tmp_path / "reports" / "harness.duckdb"
    db.parent.mkdir()
    reader = subprocess.Popen(
        [sys.executable, "-c", WAIT_THEN_READ, str(db)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        assert reader.stdout is not None
        assert reader.stdout.readline().strip() == "waiting"
        Store.open(db).close()
        out, _ = reader.communicate(timeout=60)
    finally:
        reader.kill()
    assert out.strip() == "(0,)"
    assert sorted(p.name for p in db.parent.iterdir()) == ["harness.duckdb", "runs"]
