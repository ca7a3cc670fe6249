"""A view of the results database redefined by hand (adversary round 13, part B, found and not
fixed there): readers read through the harness's own views, whatever the file's say, and a
writer writes the file's again. Through the real CLI (click's runner) over real DuckDB files."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from harness.cli import main
from harness.store._views import changed_views
from tests.e2e.edited_store import edited


def _ok(args: list[str]) -> str:
    result = CliRunner().invoke(main, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 0, result.output
    return result.output


def _changed(db: Path) -> list[str]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return changed_views(con, db.parent / "runs", anywhere=True)
    finally:
        con.close()


EDITS = {
    # other columns: every reader's query failed (a DuckDB BinderException traceback, exit 1)
    "other columns": ["CREATE OR REPLACE VIEW results AS SELECT 1 AS x"],
    # the same columns and no rows: the report and the baseline said 0 results, silently
    "no rows": ["CREATE OR REPLACE VIEW results AS SELECT * FROM results_compacted WHERE false"],
    # a derived view with its column names given
    "named columns": ["DROP VIEW v_run_cells CASCADE",
                      "CREATE VIEW v_run_cells(a) AS SELECT 1"],
    # a view that fails when read
    "failing": ["CREATE OR REPLACE VIEW spans AS SELECT error('edited') AS x"],
}  # fmt: skip


@pytest.mark.parametrize("edit", EDITS.values(), ids=EDITS.keys())
def test_a_view_redefined_by_hand_is_read_as_the_harness_writes_it(
    stored: Path, tmp_path: Path, edit: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    """Before: readers used the file's view: a traceback (exit 1), or a report of what the edit
    chose; now they read both cells, say which views were edited, and a writer rewrites them."""
    db = edited(stored, tmp_path, *edit)
    assert _changed(db)
    said = _ok(["report", "--db", str(db), "--out", str(tmp_path / "rep"), "--format", "md"])
    assert "(2 results)" in said
    assert "are not the harness's (edited by hand?)" in caplog.text
    said = _ok(["baseline", "save", "--db", str(db), "-o", str(tmp_path / "b.json")])
    assert "2 cells" in said
    _ok(["gate", "--db", str(db), "--baseline", str(tmp_path / "baseline.json")])
    _ok(["compact", "--db", str(db)])
    assert _changed(db) == []


def test_a_file_moved_with_its_runs_reads_them_where_they_are_now(
    stored: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A copy's views read the original's runs folder; a reader now reads the copy's own
    (nothing edited: no warning), and the harness's views compare equal to themselves."""
    assert _changed(stored / "h.duckdb") == []
    copy = tmp_path / "moved"
    shutil.copytree(stored, copy)
    con = duckdb.connect(str(copy / "h.duckdb"), read_only=True)
    try:
        assert changed_views(con, copy / "runs") == ["results", "spans"]
        assert changed_views(con, copy / "runs", anywhere=True) == []
    finally:
        con.close()
    said = _ok(["report", "--db", str(copy / "h.duckdb"), "--out", str(tmp_path / "r"),
                "--format", "md"])  # fmt: skip
    assert "(2 results)" in said
    assert "edited by hand" not in caplog.text
