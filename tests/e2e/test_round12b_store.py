"""Faults found by adversary round 12, part B (issue 34), in the store and what reads it: a
database edited by hand, a file-size limit, and a model's reply holding a lone surrogate. Each
test fails on 6491dde, through the real CLI (click's runner, or a subprocess) over real DuckDB
files."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from harness.cli import main
from tests.e2e.edited_store import SUITE, edited


def _one_line(result: object, code: int) -> str:
    output = str(getattr(result, "output", ""))
    assert getattr(result, "exit_code", None) == code, output
    assert getattr(result, "exception", None) is None or isinstance(
        getattr(result, "exception", None), SystemExit
    ), output
    assert "Traceback" not in output
    return output


def test_views_dropped_by_hand_are_made_again(stored: Path, tmp_path: Path) -> None:
    """Before: a view dropped by hand was a DuckDB ``CatalogException`` traceback, exit 1, in
    ``report``, ``gate`` and ``baseline save``. Now a reader that misses one has a writer make
    the views again, as for an older file."""
    db = edited(stored, tmp_path, "DROP VIEW v_cells", "DROP VIEW v_run_cells",
                 "DROP VIEW v_mode_summary", "DROP VIEW results")  # fmt: skip
    runner = CliRunner()
    report = runner.invoke(main, ["report", "--db", str(db), "--out", str(tmp_path / "r"),
                                  "--format", "md"])  # fmt: skip
    assert "(2 results)" in _one_line(report, 0)
    gate = runner.invoke(main, ["gate", "--db", str(db), "--baseline",
                                str(stored / "baseline.json")])  # fmt: skip
    _one_line(gate, 0)


def test_a_table_dropped_by_hand_is_named_in_one_line(stored: Path, tmp_path: Path) -> None:
    """Before: ``DROP TABLE bench_runs`` gave a multi-line DuckDB traceback, exit 1."""
    db = edited(stored, tmp_path, "DROP VIEW v_cells", "DROP VIEW v_run_cells",
                 "DROP VIEW v_mode_summary", "DROP VIEW v_tool_calls",
                 "DROP TABLE bench_runs")  # fmt: skip
    for args in (["report", "--out", str(tmp_path / "r")], ["baseline", "save", "-o",
                                                           str(tmp_path / "b.json")]):  # fmt: skip
        done = CliRunner().invoke(main, [*args, "--db", str(db)])
        output = _one_line(done, 2)
        assert "its table bench_runs is missing" in output
        assert len(output.strip().splitlines()) == 1


def test_a_null_list_in_bench_runs_does_not_crash_the_gate(stored: Path, tmp_path: Path) -> None:
    """Before: ``suites``/``modes``/``providers`` set to NULL by hand: ``TypeError: 'NAType'
    object is not iterable``, exit 1. Now the run is taken as not restricted there."""
    db = edited(stored, tmp_path, "UPDATE bench_runs SET suites = NULL, modes = NULL, "
                 "providers = NULL, epochs = NULL, config = NULL")  # fmt: skip
    gate = CliRunner().invoke(main, ["gate", "--db", str(db), "--baseline",
                                     str(stored / "baseline.json")])  # fmt: skip
    _one_line(gate, 0)


@pytest.mark.parametrize(
    ("sql", "said"),
    [
        ("UPDATE results_compacted SET cost_usd = -5", "-5.0 is not a cost"),
        ("UPDATE results_compacted SET cost_usd = 1e308", "add up past the largest number"),
    ],
    ids=["negative cost", "costs past the largest float"],
)
def test_baseline_save_refuses_what_the_gate_would_refuse(
    stored: Path, tmp_path: Path, sql: str, said: str
) -> None:
    """Before: a cost of -5 (edited by hand) was written into the baseline, which ``gate``
    then refused; two costs of 1e308 were a ``ValueError`` traceback (``inf`` is no JSON)."""
    db = edited(stored, tmp_path, sql)
    out = tmp_path / "new.json"
    done = CliRunner().invoke(main, ["baseline", "save", "--db", str(db), "-o", str(out)])
    assert said in _one_line(done, 2)
    assert not out.exists()


def test_a_file_size_limit_is_no_room_not_a_traceback(tmp_path: Path) -> None:
    """Before: under ``ulimit -f`` a fresh ``--db`` failed its checkpoint with DuckDB's
    ``FatalException: ... File too large``, a traceback, exit 1 (a compaction the same).
    EFBIG is now no room, as a full disk is: exit 3, the run resumable."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (100 * 1024, 100 * 1024))

    env = {**os.environ, "HARNESS_DISK_FULL_WAIT_S": "0"}
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", str(SUITE), "--providers", "mock",
         "--modes", "react", "--tasks", "add-small", "--db", str(tmp_path / "h.duckdb"),
         "--no-progress"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, preexec_fn=limit,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr
    assert "File too large" in done.stderr


def test_a_reply_holding_a_lone_surrogate_keeps_its_spans(tmp_path: Path) -> None:
    """Before: a model's ``"\\ud800"`` (valid JSON, decoded to a lone surrogate) was written
    to the span file as that escape, which DuckDB's reader drops: the chat span and the run's
    own span went missing from the store, silently ("1 spans"). Now it is U+FFFD there."""
    suite = tmp_path / "s.yaml"
    suite.write_text(
        "suite: sur\ntasks:\n  - id: t1\n    prompt: hi\n"
        "    expect: {kind: contains, value: ok}\n"
        '    mock:\n      turns:\n        - {text: "ok\\ud800"}\n',
        encoding="utf-8",
    )
    db = tmp_path / "h.duckdb"
    done = CliRunner().invoke(main, ["run", str(suite), "--providers", "mock", "--modes",
                                     "react", "--db", str(db), "--no-progress"])  # fmt: skip
    assert done.exit_code == 0, done.output
    con = duckdb.connect(str(db), read_only=True)
    try:
        names = sorted(str(r[0]).split(" ")[0] for r in con.execute("SELECT name FROM spans")
                       .fetchall())  # fmt: skip
    finally:
        con.close()
    assert names == ["chat", "invoke_agent", "iteration"], names
    assert "3 spans" in done.output


def _cell(db: Path) -> tuple[str, str]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        row = con.execute("SELECT run_id, cell_key FROM results_compacted LIMIT 1").fetchone()
    finally:
        con.close()
    assert row is not None
    return str(row[0]), str(row[1])


def test_the_viewer_shows_a_cell_whose_spans_view_was_dropped(stored: Path, tmp_path: Path) -> None:
    """Before: ``DROP VIEW spans`` by hand: the cell page was a 500 (a DuckDB
    ``CatalogException`` and its traceback in the server's log)."""
    from starlette.testclient import TestClient

    from harness.view import ViewConfig, create_app

    db = edited(stored, tmp_path, "DROP VIEW v_tool_calls", "DROP VIEW spans")
    run_id, key = _cell(db)
    client = TestClient(create_app(ViewConfig(db)), base_url="http://127.0.0.1")
    page = client.get(f"/runs/{run_id}/cell", params={"key": key})
    assert page.status_code == 200, page.text[:300]
    assert "chat mock-model" in page.text


def test_the_viewer_answers_a_cell_whose_calls_are_no_list(stored: Path, tmp_path: Path) -> None:
    """Before: a cell whose ``calls`` was edited to a JSON string: a 500 from jinja's
    ``UndefinedError`` and a traceback in the server's log. Now a page saying what failed."""
    from starlette.testclient import TestClient

    from harness.view import ViewConfig, create_app

    db = edited(stored, tmp_path, "UPDATE results_compacted SET calls = '\"x\"'")
    run_id, key = _cell(db)
    client = TestClient(create_app(ViewConfig(db)), base_url="http://127.0.0.1")
    page = client.get(f"/runs/{run_id}/cell", params={"key": key})
    assert page.status_code == 500
    assert "edited by hand or damaged" in page.text
    assert "Cannot show this page" in page.text
