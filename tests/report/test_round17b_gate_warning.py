"""A fault found by adversary round 17, part B (issue 34), fixed by the lead in
harness/report/_gate.py: a cell that errored in the baseline and errors again is in the run, yet
``harness gate`` warned "N baseline cell(s) not in this run" while its own ``missing_cells``
check said 0 (the warnings were computed over the scored cells only)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main

_SUITE = (
    "suite: s\ntasks:\n"
    "  - id: ok\n    prompt: p\n    tools: []\n    expect: {kind: contains, value: '4'}\n"
    "    mock: {turns: [{text: '4'}]}\n"
    "  - id: broken\n    prompt: p\n    tools: []\n    expect: {kind: contains, value: '4'}\n"
)


def test_a_cell_errored_in_both_is_not_called_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "s.yaml").write_text(_SUITE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    run = ["run", "s.yaml", "--modes", "react", "--db", "h.duckdb", "--no-progress"]
    ran = runner.invoke(main, run)
    assert ran.exit_code == 3, ran.output  # one cell errored
    saved = runner.invoke(main, ["baseline", "save", "--db", "h.duckdb", "-o", "b.json"])
    assert saved.exit_code == 0, saved.output
    gate = runner.invoke(main, ["gate", "--db", "h.duckdb", "--baseline", "b.json"])
    assert gate.exit_code == 1, gate.output  # the errored cell fails the gate: right
    assert "errored_cells" in gate.output
    assert "not in this run" not in gate.output, gate.output
