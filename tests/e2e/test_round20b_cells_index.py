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


@pytest.mark.parametrize("index", ["fifo", "deep"])
def test_a_hostile_cells_index_does_not_stop_a_quarantine(tmp_path: Path, index: str) -> None:
    stored = store_two_cells(tmp_path / "s")
    con = duckdb.connect(str(stored / "h.duckdb"), read_only=True)
    (run_id,) = con.execute("SELECT run_id FROM bench_runs").fetchone()
    con.close()
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
