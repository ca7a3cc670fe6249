"""Faults found by adversary round 13, part B (issue 34): a database whose views or
``schema_version`` table were changed by hand, and a ``--provider-opt`` value TOML reads as a
date. Each test fails on a14260d, through the real CLI (click's runner) over real DuckDB files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e.edited_store import SUITE, edited
from tests.e2e.edited_store import said as _said


def _readers(db: Path, tmp_path: Path) -> list[list[str]]:
    return [
        ["report", "--db", str(db), "--out", str(tmp_path / "rep"), "--format", "md"],
        ["gate", "--db", str(db), "--baseline", str(tmp_path / "baseline.json")],
        ["baseline", "save", "--db", str(db), "-o", str(tmp_path / "b2.json")],
    ]


def test_a_view_replaced_by_a_table_is_read_through_the_harness_s_own(
    stored: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Before: the table was read as the view: a DuckDB traceback, exit 1, from each reader.
    Since round 14 a reader reads through the harness's own view (round 13 had it ask a writer,
    which cannot replace a table: exit 2); a writer still refuses the file in one line."""
    db = edited(stored, tmp_path, "DROP VIEW results CASCADE", "CREATE TABLE results(x INT)")
    for args in _readers(db, tmp_path):
        _said(args, 0)
    # said once per process and file (the viewer opens the file for every page)
    assert caplog.text.count("the views results of") == 1, caplog.text
    assert "edited by hand" in caplog.text
    assert "(2 results)" in _said(_readers(db, tmp_path)[0], 0)
    said = _said(["compact", "--db", str(db)], 2)
    assert 'Table with name "results" already exists' in said, said


@pytest.mark.parametrize(
    "edit",
    [
        ("DROP TABLE schema_version", "CREATE TABLE schema_version(version VARCHAR)",
         "INSERT INTO schema_version VALUES ('x')"),
        ("DROP TABLE schema_version", "CREATE TABLE schema_version(v INTEGER)"),
    ],
    ids=["text versions", "no version column"],
)  # fmt: skip
def test_a_schema_version_table_edited_by_hand_is_one_line(
    stored: Path, tmp_path: Path, edit: tuple[str, ...]
) -> None:
    """Before: ``SELECT max(version) FROM schema_version`` failed outside any handler: a DuckDB
    ``BinderException`` traceback, exit 1, from every reader."""
    db = edited(stored, tmp_path, *edit)
    for args in _readers(db, tmp_path):
        assert "cannot read the schema version of" in _said(args, 2)


@pytest.mark.parametrize("value", ["1979-05-27", "07:32:00", "[1979-05-27T07:32:00Z]"])
def test_a_provider_opt_value_toml_reads_as_a_date_is_text(tmp_path: Path, value: str) -> None:
    """Before: ``--provider-opt openai.timeout_s=1979-05-27``: TOML made a ``date``, and
    ``json.dumps`` of the overrides raised ``TypeError``: a traceback, exit 1."""
    before = os.environ.get("HARNESS_PROVIDER_OPTS")
    try:
        said = _said(["run", str(SUITE), "--providers", "mock", "--modes", "react", "--db",
                      str(tmp_path / "h.duckdb"), "--no-progress", "--tasks", "add-small",
                      "--provider-opt", f"openai.timeout_s={value}"], 2)  # fmt: skip
    finally:
        if before is None:
            os.environ.pop("HARNESS_PROVIDER_OPTS", None)
        else:
            os.environ["HARNESS_PROVIDER_OPTS"] = before
    assert "timeout_s" in said
