"""Fault found by adversary round 19, part B (issue 34), in round 17's per-state cache of the
check for macros under DuckDB's names: the state was the file's inode, size and modification
time, so a macro ``avg`` written in place (DuckDB's file keeps its size) with the
modification time put back (``touch -r``) was never checked again by the process that had
read the file before (``harness view``, a script): ``gate`` passed. Fails on f4c036f."""

from __future__ import annotations

import os
from pathlib import Path

import duckdb

from tests.e2e.edited_store import said, store_two_cells


def test_a_macro_written_with_the_same_size_and_time_is_found(tmp_path: Path) -> None:
    store_two_cells(tmp_path)
    db = tmp_path / "h.duckdb"
    gate = ["gate", "--db", str(db), "--baseline", str(tmp_path / "baseline.json")]
    said(gate, 0)  # read once in this process: the file's state is known clean
    before = os.stat(db)
    con = duckdb.connect(str(db))
    con.execute("CREATE MACRO avg(a) AS 42")
    con.close()
    os.utime(db, ns=(before.st_atime_ns, before.st_mtime_ns))  # touch -r
    after = os.stat(db)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        before.st_ino, before.st_size, before.st_mtime_ns,
    )  # fmt: skip
    assert "under the name of DuckDB's own function" in " ".join(said(gate, 2).split())
