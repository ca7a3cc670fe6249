"""A fault found by adversary round 17, part B (issue 34), past round 16's refusal of a macro
under a DuckDB function's name: the check itself called ``duckdb_functions()`` and
``current_database()`` by their plain names, so a table macro ``duckdb_functions`` returning no
row, or a macro ``current_database()``, hid every other macro: with ``avg(x) AS 42`` beside it,
``report`` and ``gate`` exited 0 and ``v_mode_summary`` read a pass rate of 42. Fails on
9919cbe."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.edited_store import edited, said

_HIDERS = {
    "duckdb_functions": "CREATE MACRO duckdb_functions() AS TABLE "
    "SELECT * FROM system.main.duckdb_functions() WHERE false",
    "current_database": "CREATE MACRO current_database() AS 'elsewhere'",
}


@pytest.mark.parametrize("hider", sorted(_HIDERS))
def test_a_macro_hiding_the_check_is_named_with_the_rest(
    stored: Path, tmp_path: Path, hider: str
) -> None:
    db = edited(stored, tmp_path, "CREATE MACRO avg(a) AS 42", _HIDERS[hider])
    base = str(tmp_path / "baseline.json")
    for args in (
        ["report", "--db", str(db), "--out", str(tmp_path / "r")],
        ["gate", "--db", str(db), "--baseline", base],
    ):
        out = " ".join(said(args, 2).split())
        assert "under the name of DuckDB's own function" in out, out
        assert "avg" in out
        assert hider in out
