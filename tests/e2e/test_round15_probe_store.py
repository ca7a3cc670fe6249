"""Faults a probe of round 14's store fixes found (issue 34, round 15 probe), each through the
real CLI (click's runner) over real DuckDB files edited by hand."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from tests.e2e.edited_store import SUITE, edited
from tests.e2e.edited_store import said as _said
from tests.e2e.test_round14b_store import _precious, _run


@pytest.mark.parametrize("name", ["Results", "V_Run_Cells"])
def test_a_view_redefined_under_another_case_is_read_and_written_again(
    stored: Path, tmp_path: Path, name: str
) -> None:
    """Before: DuckDB's names ignore case, the harness's checks did not: every command said
    ``View with name "results" already exists!``, exit 2, for good."""
    db = edited(stored, tmp_path, f"CREATE OR REPLACE VIEW {name} AS SELECT 1 AS x")
    assert "(2 results)" in _said(["report", "--db", str(db), "--out", str(tmp_path / "r"),
                                   "--format", "md"], 0)  # fmt: skip
    _said(["compact", "--db", str(db)], 0)
    _said(_run(db), 0)


def test_a_link_named_like_a_run_is_not_compacted(stored: Path, tmp_path: Path) -> None:
    """Before: a run id ``evil`` with ``runs/evil`` a link to someone's folder: ``compact``
    emptied the folder (its shards, ``finish.json``, ``cells.jsonl``, ``.*.tmp``)."""
    con = duckdb.connect(str(stored / "h.duckdb"), read_only=True)
    run_id = con.execute("SELECT run_id FROM bench_runs").fetchone()[0]  # type: ignore[index]
    con.close()
    db = edited(stored, tmp_path / "db", f"UPDATE bench_runs SET run_id = 'evil' WHERE run_id "
                f"= '{run_id}'")  # fmt: skip
    victim = tmp_path / "victim"
    before = _precious(victim)
    (tmp_path / "db" / "runs" / "evil").symlink_to(victim)
    said = _said(["compact", "--db", str(db)], 0)
    assert "its folder is a symbolic link" in said, said
    assert sorted(os.listdir(victim)) == before


def test_a_database_in_a_folder_with_glob_characters_is_one_clear_line(tmp_path: Path) -> None:
    """Before: DuckDB read the views' path as a pattern: ``No files found that match the
    pattern`` for ``d[1]/``, ``its table bench_runs is missing`` for ``f?g/``."""
    for folder in ("d[1]", "f?g"):
        said = _said(_run(tmp_path / folder / "h.duckdb"), 2)
        assert "DuckDB reads a path holding '[', ']', '?' or '*' as a pattern" in said, said


def test_a_reader_makes_the_schema_shards_without_the_database_s_lock(
    stored: Path, tmp_path: Path
) -> None:
    """Before: with ``runs/`` deleted, a reader asked a writer, which waited on another
    process's read-only hold and said the file was in use (exit 2 after 13 s)."""
    shutil.copytree(stored, tmp_path, dirs_exist_ok=True)
    shutil.rmtree(tmp_path / "runs")
    hold = "import duckdb, sys, time; c = duckdb.connect(sys.argv[1], read_only=True); " \
           "print('held', flush=True); time.sleep(120)"  # fmt: skip
    other = subprocess.Popen(
        [sys.executable, "-c", hold, str(tmp_path / "h.duckdb")], stdout=subprocess.PIPE, text=True
    )  # another process's reader
    try:
        assert other.stdout is not None
        assert other.stdout.readline().strip() == "held"
        said = _said(["report", "--db", str(tmp_path / "h.duckdb"), "--out",
                      str(tmp_path / "r"), "--format", "md"], 0)  # fmt: skip
    finally:
        other.kill()
        other.wait()
    assert "(2 results)" in said


def test_a_judge_with_no_model_is_refused_by_validate(tmp_path: Path) -> None:
    """Before: ``provider: openai`` (no model) passed ``suites validate``; every grading then
    failed ``ConfigError: provider 'openai': no model``."""
    path = tmp_path / "s.yaml"
    path.write_text("suite: s\ntasks:\n  - id: j\n    prompt: P\n    expect: {kind: judge, "
                    "provider: openai, rubric: R}\n", encoding="utf-8")  # fmt: skip
    said = _said(["suites", "validate", str(path)], 2)
    assert "provider 'openai': no model" in said, said
    assert SUITE.is_file()
