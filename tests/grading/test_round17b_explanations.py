"""A fault found by adversary round 17, part B (issue 34): a grade's explanation was cut to its
first 300 characters, and a command grader's starts with the command: after a command of 300
characters (a test script's usual length) ``results.grader_explanation`` and the report held
only the command, never its status (``exit 1``) nor its output. Fails on 9919cbe."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from harness.cli import main
from harness.grading._grade import Grade

_COMMAND = "true " + " ".join(f"arg{i}" for i in range(80)) + " && echo THREE-OF-FIVE && exit 1"


def test_a_long_commands_status_and_output_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "s.yaml").write_text(
        "suite: s\ntasks:\n  - id: a\n    prompt: p\n    tools: []\n"
        f"    expect: {{kind: command, command: '{_COMMAND}'}}\n"
        "    mock: {turns: [{text: 'x'}]}\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(
        main, ["run", "s.yaml", "--modes", "react", "--db", "h.duckdb", "--no-progress"]
    )
    assert done.exit_code == 0, done.output
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT passed, grader_explanation FROM results").fetchall()
    [(passed, explanation)] = rows
    assert passed is False
    assert len(explanation) <= 300
    assert explanation.startswith("`true arg0")
    assert "exit 1" in explanation
    assert explanation.endswith("THREE-OF-FIVE")


def test_a_short_explanation_is_kept_whole() -> None:
    assert Grade(True, 1.0, "a\n  b").explanation == "a b"
