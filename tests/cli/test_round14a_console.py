"""What ``harness run`` prints of a user's names (issue 34, adversary round 14, part A): rich's
emoji codes turned ``:m:`` and ``:fire:`` into pictures (a provider ``openai:m`` was printed
``openaiⓂ pre-flight failed``; ``--db h:fire:.duckdb`` as ``-> h🔥.duckdb``), and the summary
printed ``--db`` as markup (``h[x].duckdb`` as ``h.duckdb``). Click's runner, the mock provider."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main
from harness.cli._console import SafeConsole

TASKS = """\
suite: s
tasks:
  - {id: a, prompt: hi, expect: {kind: contains, value: hi}, mock: {turns: [{text: hi}]}}
"""


@pytest.mark.timeout(600)
def test_the_summary_shows_the_database_path_as_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "s.yaml").write_text(TASKS)
    monkeypatch.chdir(tmp_path)
    db = "h[x]:fire:.duckdb"
    args = ["run", "s.yaml", "--modes", "react", "--providers", "mock", "--db", db, "--no-progress"]
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 0, done.output
    assert f"-> {db}" in done.output  # '-> h🔥.duckdb' before


def test_the_console_prints_emoji_codes_as_text() -> None:
    console = SafeConsole(record=True, width=200)
    console.print("openai:m: pre-flight failed")
    assert "openai:m: pre-flight failed" in console.export_text()  # 'openaiⓂ pre-flight' before
