"""Fault found by adversary round 19, part B (issue 34), past round 18's FIFO at a schema
shard's name: a reader made the schema shards only when they were missing, so a damaged one
(a regular file that is no Parquet: cut, or a 2 GB file of zeros) failed every ``report`` and
``gate`` (``No magic bytes found at end of file .../_schema/results-schema.parquet``) until a
writer ran. Fails on f4c036f."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e.edited_store import said, store_two_cells


@pytest.mark.parametrize("kind", ["results", "spans"])
def test_a_damaged_schema_shard_is_made_again_by_a_reader(tmp_path: Path, kind: str) -> None:
    store_two_cells(tmp_path)
    schema = tmp_path / "runs" / "_schema" / f"{kind}-schema.parquet"
    schema.write_bytes(b"")
    os.truncate(schema, 1 << 30)  # a gigabyte of zeros (sparse)
    said(["report", "--db", str(tmp_path / "h.duckdb"), "--out", str(tmp_path / "r")], 0)
    said(["gate", "--db", str(tmp_path / "h.duckdb"), "--baseline",
          str(tmp_path / "baseline.json")], 0)  # fmt: skip
    assert schema.stat().st_size < 100_000
