"""A fault found by adversary round 21, part B (issue 34): a writer moving a damaged shard to
``runs/<run>/quarantine/`` made that folder with ``mkdir(exist_ok=True)``: a symbolic link
planted there had the shard and the quarantine's log written into the link's target, outside
the runs folder (``harness compact`` exit 0); a file or a FIFO there ended ``harness compact``
and every ``harness run`` on the database in a ``FileExistsError`` traceback, exit 1. The folder
is the harness's own now (``own_folder``): refused in one line, exit 2. Each fails on 84cec7a."""

from __future__ import annotations

import os
from pathlib import Path

import duckdb
import pytest

from tests.e2e.edited_store import said, store_two_cells


@pytest.mark.parametrize("kind", ["link", "file", "fifo"])
def test_a_quarantine_folder_that_is_no_folder_is_refused(tmp_path: Path, kind: str) -> None:
    stored = store_two_cells(tmp_path / "s")
    con = duckdb.connect(str(stored / "h.duckdb"), read_only=True)
    row = con.execute("SELECT run_id FROM bench_runs").fetchone()
    con.close()
    assert row is not None
    folder = stored / "runs" / str(row[0])
    folder.mkdir()
    (folder / "results-20260101000000-1-abcdef-000001.parquet").write_bytes(b"\0" * 100)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    if kind == "link":
        (folder / "quarantine").symlink_to(elsewhere)
    elif kind == "file":
        (folder / "quarantine").write_text("x")
    else:
        os.mkfifo(folder / "quarantine")
    shown = said(["compact", "--db", str(stored / "h.duckdb")], 2)
    assert "cannot quarantine" in shown
    assert list(elsewhere.iterdir()) == []
