"""Faults found by adversary round 20, part B (issue 34), in how a writer names the cells of a
damaged shard it quarantines (``runs/<run>/cells.jsonl``): a FIFO there held ``harness compact``
for ever (killed by ``timeout``), and a line nested 200,000 deep ended it in a
``RecursionError`` traceback, exit 1. Each fails on 218441d."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from tests.e2e.edited_store import store_two_cells


def _run_id(db: Path) -> str:
    """The id of the one run stored in ``db``."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        row = con.execute("SELECT run_id FROM bench_runs").fetchone()
    finally:
        con.close()
    assert row is not None
    return str(row[0])


@pytest.mark.parametrize("index", ["fifo", "deep"])
def test_a_hostile_cells_index_does_not_stop_a_quarantine(tmp_path: Path, index: str) -> None:
    stored = store_two_cells(tmp_path / "s")
    run_id = _run_id(stored / "h.duckdb")
    folder = stored / "runs" / run_id
    folder.mkdir(exist_ok=True)
    (folder / "results-20260101000000-1-abcdef-000001.parquet").write_bytes(b"\0" * 100)
    cells = folder / "cells.jsonl"
    if index == "fifo":
        os.mkfifo(cells)
    else:
        cells.write_text('{"shard": "x", "cells": ["a"]}\n' + "[" * 200_000 + "\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "compact", "--db", str(stored / "h.duckdb")],
        capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "quarantined" in done.stderr


def _compact(folder: Path, db: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", "compact", "--db", str(db)],
        capture_output=True, text=True, timeout=120, env=env, cwd=folder,
    )  # fmt: skip


def _hostile(path: Path, kind: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "deep":
        path.write_text("[" * 200_000 + "\n")
    else:  # lines that are JSON but no object
        path.write_text('[1]\n"x"\n{"shard": "s", "cells": [1, {"a": 2}], "reason": "r"}\n')


@pytest.mark.parametrize("kind", ["fifo", "deep"])
def test_a_hostile_finish_file_of_a_stale_run_does_not_stop_a_writer(
    tmp_path: Path, kind: str
) -> None:
    """A run left ``running`` by a process that is gone is closed by the next writer, which
    reads its ``finish.json``: a FIFO there held every writer for ever, a deep value was a
    ``RecursionError`` traceback."""
    stored = store_two_cells(tmp_path / "s")
    con = duckdb.connect(str(stored / "h.duckdb"))
    row = con.execute("SELECT run_id FROM bench_runs").fetchone()
    assert row is not None
    run_id = row[0]
    con.execute("UPDATE bench_runs SET status = 'running', pid = 999999999")
    con.close()
    _hostile(stored / "runs" / run_id / "finish.json", kind)
    done = _compact(tmp_path, stored / "h.duckdb")
    assert done.returncode == 0, done.stderr
    con = duckdb.connect(str(stored / "h.duckdb"), read_only=True)
    assert con.execute("SELECT status FROM bench_runs").fetchone() == ("interrupted",)
    con.close()


@pytest.mark.parametrize("kind", ["fifo", "deep", "objects"])
def test_a_hostile_quarantine_log_does_not_stop_a_writer(tmp_path: Path, kind: str) -> None:
    """Every writer reads ``runs/*/quarantine/quarantined.jsonl`` into the runs' errors: a FIFO
    held it for ever, a deep line was a ``RecursionError``, a line not an object an
    ``AttributeError`` traceback."""
    stored = store_two_cells(tmp_path / "s")
    run_id = _run_id(stored / "h.duckdb")
    _hostile(stored / "runs" / run_id / "quarantine" / "quarantined.jsonl", kind)
    done = _compact(tmp_path, stored / "h.duckdb")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
