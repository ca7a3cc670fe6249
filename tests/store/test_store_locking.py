"""One writer at a time, and a killed run keeps every finished cell (real subprocesses)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pytest

from harness.store import Store, StoreLocked, results_df, runs_df
from harness.store._locking import lock_path

HOLD_STORE = """
import sys
from harness.store import Store
s = Store.open(sys.argv[1])
print("ready", flush=True)
sys.stdin.read()
s.close()
"""

HOLD_RAW = """
import sys, duckdb
con = duckdb.connect(sys.argv[1], read_only=sys.argv[2] == "ro")
print("ready", flush=True)
sys.stdin.read()
"""

WRITE_FOREVER = """
import sys, time
from harness.store import Store
s = Store.open(sys.argv[1])
run = s.begin_run(label="killed", run_id="K")
i = 0
while True:
    s.write_result({"run_id": run, "suite": "s", "task_id": f"t{i:03d}", "mode": "react",
                    "provider": "mock", "epoch": 0, "passed": i % 2 == 0, "cost_usd": 0.5})
    print(i, flush=True)
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


def test_a_second_writer_is_refused_with_the_pid(db_path: Path) -> None:
    Store.open(db_path).close()
    with holder(HOLD_STORE, db_path) as proc:
        info = json.loads(lock_path(db_path).read_text())
        assert info["pid"] == proc.pid
        for read_only in (False, True):  # DuckDB refuses even a reader meanwhile
            with pytest.raises(StoreLocked, match=f"is in use by PID {proc.pid} ") as caught:
                Store.open(db_path, read_only=read_only)
            assert caught.value.pid == proc.pid
            assert "-c" in str(caught.value)  # the holder's command line, from the lock file
    assert not lock_path(db_path).exists()  # removed on close
    with Store.open(db_path) as store:  # free again
        assert runs_df(store).empty


@pytest.mark.parametrize("mode", ["rw", "ro"])
def test_a_holder_without_a_lock_file_is_named_from_duckdb(db_path: Path, mode: str) -> None:
    """Another program (the duckdb CLI, a notebook) holds the file, writing or reading."""
    Store.open(db_path).close()
    with holder(HOLD_RAW, db_path, mode) as proc:
        with pytest.raises(StoreLocked, match=f"in use by PID {proc.pid} ") as caught:
            Store.open(db_path)
        assert caught.value.pid == proc.pid


def test_a_second_writer_in_the_same_process_is_refused(store: Store, db_path: Path) -> None:
    with pytest.raises(StoreLocked, match=f"PID {os.getpid()} \\(this process: a Store has"):
        Store.open(db_path)
    with Store.open(db_path, read_only=True) as ro:  # a reader shares the writer's database
        assert ro.read_only


def test_another_duckdb_connection_in_this_process(db_path: Path) -> None:
    Store.open(db_path).close()
    raw = duckdb.connect(str(db_path), read_only=True)
    try:
        with pytest.raises(StoreLocked, match="this process"):
            Store.open(db_path)
    finally:
        raw.close()


def test_a_stale_lock_file_is_taken_over(db_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    db_path.parent.mkdir(parents=True)
    lock = lock_path(db_path)
    lock.write_text(json.dumps({"pid": dead.pid, "host": os.uname().nodename, "since": "then",
                                "command": "harness run"}))  # fmt: skip
    with Store.open(db_path):
        assert json.loads(lock.read_text())["pid"] == os.getpid()
    assert not lock.exists()


def test_sigkill_mid_run_keeps_every_finished_cell(db_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITE_FOREVER, str(db_path)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    printed = -1
    try:
        while printed < 30:
            line = proc.stdout.readline()
            assert line, "the writer died"
            printed = int(line)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        rest = proc.stdout.read().split()
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    printed = int(rest[-1]) if rest else printed
    # Every cell reported written is there (one more may have committed before its print).
    with Store.open(db_path, read_only=True) as ro:
        df = results_df(ro, "K")
        assert printed + 1 <= len(df) <= printed + 2
        assert list(df["task_id"][: printed + 1]) == [f"t{i:03d}" for i in range(printed + 1)]
        assert df["cost_usd"].sum() == 0.5 * len(df)
        assert runs_df(ro)["status"].tolist() == ["running"]  # a reader changes nothing
    # The next writer closes the dead run as interrupted, finished at its last result.
    with Store.open(db_path) as store:
        run = runs_df(store).iloc[0]
        assert run["status"] == "interrupted"
        assert run["finished_at"] == df["finished_at"].max()
        assert f"process {proc.pid} stopped" in run["error"]
        assert store.existing_cells("killed") == set(df["cell_key"])
