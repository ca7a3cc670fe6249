"""What the round 15 probe found and left (issue 34), fixed by the lead in round 16: a judge's
``base_url`` httpx cannot send to, a table macro shadowing DuckDB's ``read_parquet``,
``results_compacted`` renamed under another case, and a ``\\`` in the database's folder."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.e2e.edited_store import edited, said


@pytest.mark.parametrize("url", ["http://[::1", "http://127.0.0.1:99999/v1"])
def test_a_judge_base_url_httpx_cannot_send_to_is_refused_by_validate(
    tmp_path: Path, url: str
) -> None:
    """Before: ``suites validate`` said the suite was valid (exit 0); every grading then failed
    ``base_url ... is no usable address``, or could never connect."""
    path = tmp_path / "s.yaml"
    path.write_text("suite: s\ntasks:\n  - id: j\n    prompt: P\n    expect: {kind: judge, "
                    f"provider: 'openai:m', rubric: R, provider_opts: {{base_url: '{url}'}}}}\n",
                    encoding="utf-8")  # fmt: skip
    out = said(["suites", "validate", str(path)], 2)
    assert "is no usable address" in out, out


SUITE = Path(__file__).resolve().parents[2] / "suites" / "arithmetic.yaml"
RUN = ["run", str(SUITE), "--providers", "mock", "--modes", "react", "--no-progress",
       "--tasks", "add-small"]  # fmt: skip


@pytest.mark.parametrize(
    ("macro", "named"),
    [
        ("CREATE MACRO avg(a) AS 42", "avg"),  # before: exit 0; the views' avg() gave 42
        ("CREATE MACRO read_parquet(p, union_by_name := false, filename := false) AS TABLE "
         "SELECT 1 AS x", "TABLE read_parquet"),  # before: a binder error naming neither
    ],
    ids=["avg", "read_parquet"],
)  # fmt: skip
def test_a_macro_under_a_duckdb_name_is_named_by_readers_and_writers(
    stored: Path, tmp_path: Path, macro: str, named: str
) -> None:
    db = edited(stored, tmp_path, macro)
    for args in (["report", "--db", str(db), "--out", str(tmp_path / "r")],
                 ["gate", "--db", str(db), "--baseline", str(tmp_path / "baseline.json")],
                 [*RUN, "--db", str(db)]):  # fmt: skip
        out = " ".join(said(args, 2).split())
        assert f"defines {named} under the name of DuckDB's own function" in out, out
        assert f"DROP MACRO {named}" in out
    with duckdb.connect(str(db)) as con:
        con.execute(f"DROP MACRO {named}")
    said(["report", "--db", str(db), "--out", str(tmp_path / "r")], 0)


def test_a_macro_of_its_own_name_is_left_alone(stored: Path, tmp_path: Path) -> None:
    db = edited(stored, tmp_path, "CREATE MACRO my_mean(a) AS avg(a)")
    said(["report", "--db", str(db), "--out", str(tmp_path / "r")], 0)


@pytest.mark.parametrize("table", ["Results_Compacted", "Schema_Version"])
def test_a_table_renamed_under_another_case_is_the_same_table(
    stored: Path, tmp_path: Path, table: str
) -> None:
    """Before: ``results_compacted`` renamed ``Results_Compacted`` (DuckDB's names ignore case)
    made every ``compact`` leave each run as shards, "columns this harness does not know";
    ``schema_version`` renamed made the file read as empty."""
    db = edited(stored, tmp_path, f"ALTER TABLE {table.lower()} RENAME TO {table}")
    out = said([*RUN, "--db", str(db)], 0)  # compacts the run at its end
    assert "left as shards" not in out, out
    assert "does not know" not in out
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM results_compacted").fetchone() == (3,)


def test_a_database_in_a_folder_with_a_backslash_is_one_clear_line(tmp_path: Path) -> None:
    """Before: DuckDB read the views' ``a\\b`` as ``a/b``: ``No files found that match the
    pattern`` and a cause that was not it (the runs folder gone)."""
    out = said([*RUN, "--db", str(tmp_path / "a\\b" / "h.duckdb")], 2)
    assert "DuckDB reads '\\' in a path as '/'" in out, out
