"""A secret whose value is also one of the run's own names (adversary round 9, issue 34).

Before: with ``ZZ_KEY=wordsuite`` set and a suite named ``wordsuite``, every stored row said
suite ``REDACTED`` and cell key ``REDACTED/task_alpha/...``, so ``--resume`` found none of the
finished cells and ran them all again (6 rows for 3 cells). The cell's names come from the
user's suite file and command line, never from a provider: they are stored as they are, while
a provider's echo of the same value is still scrubbed. The real CLI runs in this process."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from harness.cli import main

SUITE = """suite: wordsuite
tasks:
  - id: task_alpha
    prompt: say it
    expect: {kind: contains, value: done}
    mock: {turns: [{text: "done, wordsuite"}]}
"""


@pytest.mark.timeout(600)  # the first CLI run in a process imports for a minute at load 20
@pytest.mark.parametrize("secret", ["wordsuite", "task_alpha", "plan_and_solve"])
def test_a_secret_equal_to_a_name_of_the_run_leaves_resume_working(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, secret: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text(SUITE)
    args = ["run", "s.yaml", "--providers", "mock", "--db", "h.duckdb", "--no-progress",
            "--label", "L"]  # fmt: skip
    env = {"ZZ_KEY": secret}
    first = CliRunner().invoke(main, args, env=env)
    assert first.exit_code == 0, first.output
    again = CliRunner().invoke(main, [*args, "--resume"], env=env)
    assert again.exit_code == 0, again.output
    con = duckdb.connect("h.duckdb", read_only=True)
    try:
        rows = con.execute("SELECT suite, task_id, mode, cell_key FROM results").fetchall()
        replies = [str(r[0]) for r in con.execute("SELECT text FROM results").fetchall()]
    finally:
        con.close()
    assert len(rows) == 3, rows  # one per mode, none run twice by the resume
    assert {r[0] for r in rows} == {"wordsuite"}
    assert {r[1] for r in rows} == {"task_alpha"}
    assert all("REDACTED" not in str(r[3]) for r in rows), rows
    if secret == "wordsuite":  # the model's echo of it is still the provider's output
        assert all(secret not in reply for reply in replies), replies
