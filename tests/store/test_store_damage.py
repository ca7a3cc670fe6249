"""A damaged shard affects only its own run: a writer moves it to the run's quarantine with a
warning naming the file, the run's error names the cells it lost, and reports, compaction, new
runs and `harness compact --repair` keep working. A reader (`Store.open(read_only=True)`,
`harness report`) moves nothing: it leaves the shard out of its views, with a warning naming the
file. Real shards, real `truncate`, real DuckDB."""

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


@pytest.mark.slow
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
    assert shard.exists()  # a reader moves nothing
    assert not moved.exists()
    with Store.open(db_path) as store:  # a writer quarantines it and records the loss
        assert moved.exists()
        assert not shard.exists()
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


@pytest.mark.slow
def test_a_reader_skips_a_damaged_shard_and_leaves_it_in_place(
    db_path: Path, make_row: RowFactory, caplog: pytest.LogCaptureFixture
) -> None:
    a, b, shard = _two_runs(db_path, make_row)
    subprocess.run(["truncate", "-s", "5000", str(shard)], check=True)
    before = sorted(p.relative_to(db_path.parent) for p in db_path.parent.rglob("*"))
    with (
        caplog.at_level(logging.WARNING, logger="harness.store"),
        Store.open(db_path, read_only=True) as ro,
    ):
        rows = ro.con.execute("SELECT run_id, task_id FROM results ORDER BY task_id").fetchall()
        cells = ro.con.execute("SELECT count(*) FROM v_cells").fetchone()
        summary = ro.con.execute("SELECT sum(n) FROM v_mode_summary").fetchone()
    assert rows == [(a, "a0"), (a, "a1"), (a, "a2"), (b, "b3")]  # it still answers
    assert cells == (4,)
    assert summary == (4,)
    assert shard.name in caplog.text  # with a warning naming the file
    assert "left in place" in caplog.text
    after = sorted(p.relative_to(db_path.parent) for p in db_path.parent.rglob("*"))
    assert after == before  # no file moved, none created
    assert shard.exists()
    assert not (shard.parent / "quarantine").exists()
    # the report, a reader too, leaves it in place and still works
    proc = subprocess.run(
        [sys.executable, "-m", "harness.cli", "report", "--db", str(db_path), "--run", b,
         "--out", str(db_path.parent / "out")],
        capture_output=True, text=True, timeout=120, env=_env(),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert shard.name in proc.stderr
    assert shard.exists()
    assert not (shard.parent / "quarantine").exists()


def _env() -> dict[str, str]:
    root = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "COLUMNS": "300", "PYTHONPATH": path}


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


@pytest.mark.slow
def test_compact_repair_reads_every_shard_and_quarantines(
    db_path: Path, make_row: RowFactory
) -> None:
    a, b, shard = _two_runs(db_path, make_row)
    _spoil_pages(shard)
    proc = subprocess.run(
        [sys.executable, "-m", "harness.cli", "compact", "--repair", "--db", str(db_path)],
        capture_output=True, text=True, timeout=120, env=_env(),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert f"quarantined: run {b}" in proc.stderr
    assert shard.name in proc.stderr
    assert (shard.parent / "quarantine" / shard.name).exists()
    assert _cells(db_path, a) == ["a0", "a1", "a2"]
    assert _cells(db_path, b) == ["b3"]
    again = subprocess.run(
        [sys.executable, "-m", "harness.cli", "compact", "--repair", "--db", str(db_path)],
        capture_output=True, text=True, timeout=120, env=_env(),
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert "every shard reads whole" in again.stderr
