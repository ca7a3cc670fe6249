"""Fault found by adversary round 18, part B (issue 34): a FIFO at
``runs/_schema/results-schema.parquet`` (or ``spans-schema.parquet``) blocked every reader and
writer for ever: ``write_schema_files`` opened it with ``pq.read_schema`` to compare its
columns (``harness report`` was killed by ``timeout`` after 60 s). Fails on d9e0c2e."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.edited_store import store_two_cells


@pytest.mark.parametrize("kind", ["results", "spans"])
@pytest.mark.parametrize("command", ["report", "run"])
def test_a_fifo_named_like_a_schema_shard_blocks_nothing(
    tmp_path: Path, kind: str, command: str
) -> None:
    store_two_cells(tmp_path)
    schema = tmp_path / "runs" / "_schema" / f"{kind}-schema.parquet"
    schema.unlink()
    os.mkfifo(schema)
    args = {
        "report": ["report", "--db", str(tmp_path / "h.duckdb"), "--format", "md", "--out",
                   str(tmp_path / "out")],
        "run": ["run", str(Path(__file__).resolve().parents[2] / "suites" / "arithmetic.yaml"),
                "--providers", "mock", "--modes", "react", "--tasks", "add-small", "--db",
                str(tmp_path / "h.duckdb"), "--no-progress"],
    }[command]  # fmt: skip
    try:
        done = subprocess.run(
            [sys.executable, "-m", "harness.cli", *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except subprocess.TimeoutExpired:  # before: blocked in pq.read_schema for ever
        pytest.fail(f"`harness {command}` blocked on the FIFO at {schema}")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert schema.is_file()  # a real schema shard in its place
    assert not schema.is_symlink()
