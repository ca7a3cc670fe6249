"""A damaged shard affects only its own run: it is moved to the run's quarantine with a warning
naming the file, the run's error names the cells it lost, and reports, compaction, new runs and
`harness compact --repair` keep working. Real shards, real `truncate`, real DuckDB."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.store import Store
from harness.store._shards import shard_files

RowFactory = Callable[..., dict[str, Any]]


def _two_runs(db: Path, make_row: RowFactory) -> tuple[str, str, Path]:
    """Run A (3 cells, one shard) and run B (2 shards: b1+b2, then b3), both ended, shards
    not compacted; returns the ids and B's first results shard."""
    with Store.open(db) as store:
        a = store.begin_run(label="A")
        store.write_results([make_row(a, f"a{i}") for i in range(3)])
        b = store.begin_run(label="B")
        store.write_results([make_row(b, "b1"), make_row(b, "b2")])
        store.write_results([make_row(b, "b3")])
        store.finish_run(a)
        store.finish_run(b)
    shards = shard_files(db.parent / "runs" / b, "results")
    assert len(shards) == 2
    return a, b, shards[0]


def _spoil_pages(shard: Path) -> None:
    """Overwrite the data pages; the footer stays whole (only reading the rows fails)."""
    data = bytearray(shard.read_bytes())
    footer = int.from_bytes(data[-8:-4], "little")
    data[4 : len(data) - 8 - footer] = b"\xee" * (len(data) - 12 - footer)
    shard.write_bytes(bytes(data))


def _cells(db: Path, run: str) -> list[str]:
    with Store.open(db, read_only=True) as ro:
        rows = ro.con.execute(
            "SELECT task_id FROM results WHERE run_id = ? ORDER BY task_id", [run]
        ).fetchall()
    return [str(r[0]) for r in rows]


def test_a_truncated_shard_is_quarantined_and_only_its_run_loses_cells(
    db_path: Path, make_row: RowFactory, caplog: pytest.LogCaptureFixture
) -> None:
    a, b, shard = _two_runs(db_path, make_row)
    subprocess.run(["truncate", "-s", "5000", str(shard)], check=True)
    with caplog.at_level(logging.WARNING, logger="harness.store"):
        assert _cells(db_path, a) == ["a0", "a1", "a2"]  # the unrelated run: untouched
    assert shard.name in caplog.text  # the warning names the file
    assert _cells(db_path, b) == ["b3"]  # its own run: only the damaged shard's cells gone
    moved = shard.parent / "quarantine" / shard.name
    assert moved.exists()
    assert not shard.exists()
    with Store.open(db_path) as store:  # a writer records the loss on the run
        ((error,),) = store.con.execute(
            "SELECT error FROM bench_runs WHERE run_id = ?", [b]
        ).fetchall()
        assert error is not None
        assert shard.name in error
        assert "lost cells: s/b1/react/mock/e0, s/b2/react/mock/e0" in error
        stats = store.compact()  # compaction goes on with the rest
        assert stats.results == 4
        c = store.begin_run(label="C")  # and so do new runs
        store.write_result(make_row(c, "c1"))
        store.finish_run(c)
    assert _cells(db_path, b) == ["b3"]
    assert _cells(db_path, c) == ["c1"]
    assert moved.exists()  # compaction never deletes a quarantined file


def test_damage_inside_a_shard_is_quarantined_by_compaction(
    db_path: Path, make_row: RowFactory
) -> None:
    a, b, shard = _two_runs(db_path, make_row)
    _spoil_pages(shard)
    with Store.open(db_path) as store:
        stats = store.compact()
    assert len(stats.quarantined) == 1
    assert shard.name in stats.quarantined[0]
    assert (shard.parent / "quarantine" / shard.name).exists()
    assert _cells(db_path, a) == ["a0", "a1", "a2"]
    assert _cells(db_path, b) == ["b3"]


def test_compact_repair_reads_every_shard_and_quarantines(
    db_path: Path, make_row: RowFactory
) -> None:
    a, b, shard = _two_runs(db_path, make_row)
    _spoil_pages(shard)
    proc = subprocess.run(
        [sys.executable, "-m", "harness.cli", "compact", "--repair", "--db", str(db_path)],
        capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "300"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert f"quarantined: run {b}" in proc.stderr
    assert shard.name in proc.stderr
    assert (shard.parent / "quarantine" / shard.name).exists()
    assert _cells(db_path, a) == ["a0", "a1", "a2"]
    assert _cells(db_path, b) == ["b3"]
    again = subprocess.run(
        [sys.executable, "-m", "harness.cli", "compact", "--repair", "--db", str(db_path)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert "every shard reads whole" in again.stderr
