"""A fault found by adversary round 20, part B (issue 34): ``harness baseline save -o`` naming
the results database itself (a slip: ``-o reports/harness.duckdb``) replaced the database with
the 7 KB baseline JSON, every run lost, exit 0. Fails on 218441d."""

from __future__ import annotations

from pathlib import Path

import duckdb

from tests.e2e.edited_store import said, store_two_cells


def test_a_baseline_is_never_written_over_the_database(tmp_path: Path) -> None:
    stored = store_two_cells(tmp_path / "s")
    db = stored / "h.duckdb"
    (stored / "link.json").symlink_to(db)
    for out in (db, stored / "link.json", stored / "." / "h.duckdb"):
        shown = said(["baseline", "save", "--db", str(db), "-o", str(out)], 2)
        assert "is the results database" in shown
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM bench_runs").fetchone() == (1,)
    con.close()
    said(["baseline", "save", "--db", str(db), "-o", str(stored / "b.json")], 0)
