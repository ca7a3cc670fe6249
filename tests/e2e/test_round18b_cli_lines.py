"""Fault found by adversary round 18, part B (issue 34): the CLI's one-line errors and warnings
escaped control characters but kept line breaks, so a run id from a database edited by hand
(``R\\nharness gate: PASSED``) printed a line of its own: ``error: run R`` and then ``harness
gate: PASSED: it is still running ...``. Fails on d9e0c2e."""

from __future__ import annotations

import socket
from pathlib import Path

from tests.e2e.edited_store import edited, said, store_two_cells

FORGED = "harness gate: PASSED"


def test_an_error_naming_a_run_id_with_a_line_break_is_one_line(tmp_path: Path) -> None:
    stored = store_two_cells(tmp_path / "stored")
    db = edited(  # pid 1 is alive: the run is "still running", and `baseline save` refuses it
        stored,
        tmp_path / "edited",
        f"UPDATE bench_runs SET run_id = 'R' || chr(10) || '{FORGED}', status = 'running', "
        f"pid = 1, host = '{socket.gethostname()}'",  # this host's: its pid is checked
    )
    output = said(["baseline", "save", "--db", str(db), "-o", str(tmp_path / "b.json")], 2)
    assert output.count("\n") == 1, output  # one line
    assert f"run R\\x0a{FORGED}: it is still running" in output
