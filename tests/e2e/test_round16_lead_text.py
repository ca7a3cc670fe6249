"""Messages of megabytes (a DuckDB error, a plug-in's) reach the terminal as one bounded line
(round 16, the lead)."""

from __future__ import annotations

from pathlib import Path

from harness._oneline import LINE_LIMIT, one_line
from harness._plugins import described
from tests.e2e.edited_store import edited, said


def test_a_megabyte_database_error_is_one_bounded_line(stored: Path, tmp_path: Path) -> None:
    db = edited(stored, tmp_path, "DROP TABLE schema_version",
                "CREATE VIEW schema_version AS SELECT error(repeat('ab cd' || chr(10), 500000)) "
                "AS version")  # fmt: skip
    out = said(["report", "--db", str(db), "--out", str(tmp_path / "r")], 2)
    assert "cannot read the schema version" in out
    assert len(out) < LINE_LIMIT + 1000  # 3,000,000 characters before
    assert out.count("\n") == 1
    assert "characters more)" in out


def test_one_line_joins_cuts_and_never_raises() -> None:
    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no str")

    assert one_line(ValueError("a\n  b\tc")) == "a b c"
    assert one_line(ValueError()) == "ValueError"
    assert one_line(Unprintable()) == "Unprintable (its message could not be read)"
    cut = one_line(ValueError("x" * 5000), limit=100)
    assert cut == "x" * 100 + "... (4900 characters more)"
    assert len(described(RuntimeError("y " * 10**6))) < LINE_LIMIT + 100
