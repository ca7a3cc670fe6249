"""A fault found by adversary round 21, part B (issue 34): ``harness traces show --db`` read each
trace's grade through the database file's own ``results`` view, opened directly: a view edited
by hand (``SELECT * REPLACE ('passed' AS status) FROM results_compacted``) showed the failing
cell as passed, 31 of 31, where ``report``, ``gate`` and ``baseline save`` say the view is not
the harness's and read through their own (30 of 31). The CLI reads the grades through the
store now. Fails on 84cec7a."""

from __future__ import annotations

from pathlib import Path

import duckdb
from click.testing import CliRunner

from harness.cli import main
from tests.e2e.edited_store import SUITE


def test_traces_show_reads_grades_through_the_harnesss_own_views(tmp_path: Path) -> None:
    db, spans = tmp_path / "h.duckdb", tmp_path / "spans.jsonl"
    done = CliRunner().invoke(main, ["run", str(SUITE), "--providers", "mock", "--modes", "react",
                                     "--db", str(db), "--trace-file", str(spans),
                                     "--no-progress"])  # fmt: skip
    assert done.exit_code == 0, done.output
    con = duckdb.connect(str(db))
    failing = con.execute("SELECT count(*) FROM results WHERE status = 'failed'").fetchone()
    con.execute(
        "CREATE OR REPLACE VIEW results AS "
        "SELECT * REPLACE ('passed' AS status, true AS passed) FROM results_compacted"
    )
    con.close()
    assert failing is not None
    assert failing[0] >= 1
    shown = CliRunner().invoke(main, ["traces", "show", str(spans), "--db", str(db)])
    assert shown.exit_code == 0, shown.output
    assert shown.output.count(" failed ") == failing[0], shown.output
