"""A shard whose footer reads but whose schema is not its table's, and things in a run's folder
that are not regular files, affect only their own run (issue 27, adversary round 3, item 4).

A valid Parquet file with the wrong column types (every column rewritten as strings) used to
make every compaction and every new run fail ("avg(VARCHAR)"); a directory named like a shard
made `harness report`, `compact` and `run` crash with IsADirectoryError. Now the footer's schema
is checked too: such a shard is damaged (a writer quarantines it naming the file and the
column, a reader skips it, the run's error names the cells it lost), a foreign file is told
apart from a newer harness's shard (read, left as shards, "upgrade harness"), and a directory,
FIFO or symbolic link is never opened nor followed. Real shards, real DuckDB, real
`harness` commands."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from harness.store import Store
from harness.store._shards import shard_files

#: Spawns processes, sandboxes, browsers, clusters or servers (the fast loop skips it).
pytestmark = pytest.mark.slow

RowFactory = Callable[..., dict[str, Any]]

SUITE = """suite: fresh
defaults: {max_iterations: 2}
tasks:
  - {id: t1, prompt: p, expect: {kind: contains, value: ok}, mock: {turns: [{text: ok}]}}
"""


def _two_runs(db: Path, make_row: RowFactory) -> tuple[str, str, Path]:
    """Run A (3 cells, one shard) and run B (b1+b2, then b3: two shards), both ended, shards
    not compacted; returns the ids and B's first results shard."""
    with Store.open(db) as store:
        a = store.begin_run(label="A")
        store.write_results([make_row(a, f"a{i}", cost_usd=0.5) for i in range(3)])
        b = store.begin_run(label="B")
        store.write_results([make_row(b, "b1", cost_usd=0.25), make_row(b, "b2")])
        store.write_results([make_row(b, "b3", cost_usd=1.0)])
        store.finish_run(a)
        store.finish_run(b)
    shards = shard_files(db.parent / "runs" / b, "results")
    assert len(shards) == 2
    return a, b, shards[0]


def _harness(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    root = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args],
        capture_output=True, text=True, timeout=120, cwd=cwd,
        env={**os.environ, "COLUMNS": "300", "PYTHONPATH": path},
    )  # fmt: skip


def _cells(db: Path, run: str) -> list[str]:
    with Store.open(db, read_only=True) as ro:
        rows = ro.con.execute(
            "SELECT task_id FROM results WHERE run_id = ? ORDER BY task_id", [run]
        ).fetchall()
    return [str(r[0]) for r in rows]


def _as_strings(shard: Path, columns: list[str] | None = None) -> None:
    """Rewrite ``columns`` (every column: None) of the shard as strings: a valid Parquet file."""
    table = pq.read_table(shard)
    arrays = [
        pa.array([None if v is None else str(v) for v in table.column(c).to_pylist()], pa.string())
        if columns is None or c in columns
        else table.column(c)
        for c in table.column_names
    ]
    pq.write_table(pa.table(arrays, names=table.column_names), shard)


def _still_works(tmp_path: Path, db: Path, a: str) -> None:
    """Compaction, a report and a new `harness run` on the database all work."""
    compacted = _harness("compact", "--db", str(db))
    assert compacted.returncode == 0, compacted.stderr
    assert "Traceback" not in compacted.stderr
    report = _harness("report", "--db", str(db), "--run", a, "--out", str(tmp_path / "rep"))
    assert report.returncode == 0, report.stderr
    suite = tmp_path / "fresh.yaml"
    suite.write_text(SUITE, encoding="utf-8")
    run = _harness("run", str(suite), "--modes", "react", "--providers", "mock", "--db",
                   str(db), "--trace-file", os.devnull, "--no-progress")  # fmt: skip
    assert run.returncode == 0, run.stderr
    repair = _harness("compact", "--repair", "--db", str(db))
    assert repair.returncode == 0, repair.stderr
    assert "every shard reads whole" in repair.stderr
    assert _cells(db, a) == ["a0", "a1", "a2"]


def test_a_shard_of_strings_is_quarantined_and_the_store_keeps_working(
    tmp_path: Path, db_path: Path, make_row: RowFactory
) -> None:
    a, b, shard = _two_runs(db_path, make_row)
    _as_strings(shard)  # the adversary's file: footer whole, every column VARCHAR
    assert pq.read_metadata(shard).num_rows == 2
    seen = _harness("report", "--db", str(db_path), "--run", b, "--out", str(tmp_path / "b"))
    assert seen.returncode == 0, seen.stderr  # a reader skips it, in place
    assert shard.name in seen.stderr
    assert "column result_id is VARCHAR, expected BIGINT" in seen.stderr
    assert shard.exists()
    compacted = _harness("compact", "--db", str(db_path))  # a writer quarantines it
    assert compacted.returncode == 0, compacted.stderr
    assert shard.name in compacted.stderr
    assert "wrong column types" in compacted.stderr
    assert (shard.parent / "quarantine" / shard.name).exists()
    assert not shard.exists()
    with Store.open(db_path, read_only=True) as ro:
        ((error,),) = ro.con.execute(
            "SELECT error FROM bench_runs WHERE run_id = ?", [b]
        ).fetchall()
    assert shard.name in error
    assert "expected BIGINT" in error
    assert "lost cells: s/b1/react/mock/e0, s/b2/react/mock/e0" in error
    assert _cells(db_path, b) == ["b3"]
    _still_works(tmp_path, db_path, a)


def test_one_column_of_the_wrong_type_is_named(
    tmp_path: Path, db_path: Path, make_row: RowFactory
) -> None:
    a, b, shard = _two_runs(db_path, make_row)
    _as_strings(shard, ["cost_usd"])  # the column the views average
    with Store.open(db_path, read_only=True) as ro:  # a reader: the summaries still answer
        total = ro.con.execute(
            "SELECT sum(total_cost_usd) FROM v_mode_summary WHERE run_id = ?", [b]
        ).fetchone()
    assert total == (1.0,)
    compacted = _harness("compact", "--db", str(db_path))
    assert compacted.returncode == 0, compacted.stderr
    assert "column cost_usd is VARCHAR, expected DOUBLE" in compacted.stderr
    assert shard.name in compacted.stderr
    _still_works(tmp_path, db_path, a)
    assert _cells(db_path, b) == ["b3"]


def test_a_foreign_file_is_damaged_not_from_a_newer_harness(
    tmp_path: Path, db_path: Path, make_row: RowFactory
) -> None:
    a, b, shard = _two_runs(db_path, make_row)
    pq.write_table(pa.table({"x": [1, 2]}), shard)
    compacted = _harness("compact", "--db", str(db_path))
    assert compacted.returncode == 0, compacted.stderr
    assert "not a harness results shard (its columns: x)" in compacted.stderr
    assert "upgrade harness" not in compacted.stderr
    assert (shard.parent / "quarantine" / shard.name).exists()
    assert _cells(db_path, b) == ["b3"]
    _still_works(tmp_path, db_path, a)


def test_a_shard_from_a_newer_harness_is_read_and_left_as_shards(
    db_path: Path, make_row: RowFactory
) -> None:
    a, b, shard = _two_runs(db_path, make_row)
    table = pq.read_table(shard)
    pq.write_table(table.append_column("future", pa.array([7, 8], pa.int64())), shard)
    compacted = _harness("compact", "--db", str(db_path))
    assert compacted.returncode == 0, compacted.stderr
    assert f"left as shards: {b}: its results shards have columns this harness does not know " \
        "(future): written by a newer harness; upgrade harness" in compacted.stderr  # fmt: skip
    assert "quarantined" not in compacted.stderr
    assert shard.exists()  # not damaged: nothing moved
    assert _cells(db_path, b) == ["b1", "b2", "b3"]  # and every row read
    assert _cells(db_path, a) == ["a0", "a1", "a2"]


def test_what_is_not_a_regular_file_is_skipped_and_never_followed(
    tmp_path: Path, db_path: Path, make_row: RowFactory
) -> None:
    a, b, shard = _two_runs(db_path, make_row)
    folder = shard.parent
    outside = tmp_path / "outside.parquet"  # a real shard, outside the store
    outside.write_bytes(shard_files(db_path.parent / "runs" / a, "results")[0].read_bytes())
    odd = {
        folder / "results-99999999999999-1-1-000009.parquet": "a directory",
        folder / "spans-99999999999999-1-1-000009.parquet": "a FIFO",
        folder / "results-99999999999999-1-1-000010.parquet": "a symbolic link",
    }
    made = list(odd)
    made[0].mkdir()
    os.mkfifo(made[1])
    made[2].symlink_to(outside)
    report = _harness("report", "--db", str(db_path), "--run", b, "--out", str(tmp_path / "r"))
    assert report.returncode == 0, report.stderr  # no IsADirectoryError, no hang on the FIFO
    assert "Traceback" not in report.stderr
    for path, what in odd.items():
        assert f"{path.name} skipped ({what}" in report.stderr
        assert os.path.lexists(path)  # a reader moves nothing
    assert _cells(db_path, b) == ["b1", "b2", "b3"]  # the link's rows (run A's) are not read
    compacted = _harness("compact", "--db", str(db_path))
    assert compacted.returncode == 0, compacted.stderr
    assert "Traceback" not in compacted.stderr
    for path, what in odd.items():
        assert f"{path.name} quarantined ({what}" in compacted.stderr
        assert not os.path.lexists(path)
        assert os.path.lexists(folder / "quarantine" / path.name)
    assert (folder / "quarantine" / made[2].name).is_symlink()  # the link moved, not followed
    assert outside.exists()
    _still_works(tmp_path, db_path, a)
    assert _cells(db_path, b) == ["b1", "b2", "b3"]
