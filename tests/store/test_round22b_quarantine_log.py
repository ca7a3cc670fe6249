"""A run's quarantine log is written into its ``bench_runs.error`` by every writer that opens
the store: one update per log line, each searching the run's growing error, took 116 s at the
first `harness compact` and 35 s at each later one for a log of 20,000 lines, at every
`harness run` on the database too (adversary round 22, part B). Real DuckDB, the real CLI."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import duckdb
import pytest

from tests.e2e.edited_store import said, store_two_cells

LINES = 40_000


def _run_id(db: Path) -> str:
    con = duckdb.connect(str(db), read_only=True)
    try:
        ((run,),) = con.execute("SELECT run_id FROM bench_runs").fetchall()
    finally:
        con.close()
    return str(run)


def _error(db: Path) -> str:
    con = duckdb.connect(str(db), read_only=True)
    try:
        ((error,),) = con.execute("SELECT error FROM bench_runs").fetchall()
    finally:
        con.close()
    return str(error)


@pytest.mark.timeout(240)
def test_a_long_quarantine_log_is_recorded_once_in_linear_time(tmp_path: Path) -> None:
    db = store_two_cells(tmp_path) / "h.duckdb"
    run = _run_id(db)
    log = tmp_path / "runs" / run / "quarantine" / "quarantined.jsonl"
    log.parent.mkdir(parents=True)
    entries = [
        {"shard": f"results-{i:08d}.parquet", "reason": "cut short", "cells": [f"s/t{i}/m/p/e0"]}
        for i in range(LINES)
    ]
    entries.append(entries[7])  # a shard logged twice is named once
    log.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    for _ in range(2):  # the second writer finds every shard named already
        said(["compact", "--db", str(db)], 0)
    error = _error(db)
    assert error.count("damaged shard ") == LINES
    assert error.count("results-00000007.parquet") == 1
    last = "results-00039999.parquet quarantined (cut short); lost cells: s/t39999/m/p/e0"
    assert f"damaged shard {last}" in error


SHARDS = 10_000


@pytest.mark.timeout(120)
def test_many_damaged_shards_of_a_run_read_its_cells_index_once(tmp_path: Path) -> None:
    """Each shard quarantined read the run's whole ``cells.jsonl`` again to name the cells it
    lost: 2,500 damaged shards of one run took 19 s, 5,000 68 s (10,000 about 4.5 minutes)."""
    db = store_two_cells(tmp_path) / "h.duckdb"
    run = _run_id(db)
    folder = tmp_path / "runs" / run
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for i in range(SHARDS):
        (folder / f"results-{i:08d}.parquet").write_bytes(b"junk")  # a copy cut short
        lines.append(json.dumps({"shard": f"results-{i:08d}.parquet", "cells": [f"s/t{i}/m/p/e0"]}))
    (folder / "cells.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    said(["compact", "--db", str(db)], 0)
    error = _error(db)
    assert error.count("damaged shard ") == SHARDS
    last = "results-00009999.parquet quarantined (4 bytes: too short for Parquet)"
    assert f"{last}; lost cells: s/t9999/m/p/e0" in error


def test_a_damaged_shard_of_many_cells_is_a_warning_of_one_short_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A shard listed with 100,000 cells printed a warning line of 789 KB from `harness
    compact` (every cell named); the run's error still names them all."""
    db = store_two_cells(tmp_path) / "h.duckdb"
    run = _run_id(db)
    folder = tmp_path / "runs" / run
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results-00000001.parquet").write_bytes(b"junk")
    cells = [f"s/t{i}/m/p/e0" for i in range(100_000)]
    line = json.dumps({"shard": "results-00000001.parquet", "cells": cells})
    (folder / "cells.jsonl").write_text(line + "\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="harness.store"):
        said(["compact", "--db", str(db)], 0)
    (warned,) = [r.getMessage() for r in caplog.records if "damaged shard" in r.getMessage()]
    assert len(warned) < 3_000
    assert "s/t10/m/p/e0, " in warned
    assert " and 99950 more" in warned
    error = _error(db)
    assert f"lost cells: {', '.join(sorted(cells))}" in error
