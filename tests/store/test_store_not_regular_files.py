"""A FIFO or a link where DuckDB's write-ahead log goes (adversary round 7, issue 34): a FIFO at
``h.duckdb.wal`` hung ``harness run`` until it was killed (DuckDB opens it and blocks), and a
link there would be written through. Now the database (links followed) and its ``.wal`` (never
a link) must be regular files or absent: exit 2 naming the file, the link's target untouched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main

SUITE = """\
suite: s
tasks:
  - {id: a, prompt: hi, expect: {kind: contains, value: hi}, mock: {turns: [{text: hi}]}}
"""


@pytest.mark.timeout(600)  # a hang before: the timeout is the failure
@pytest.mark.parametrize("what", ["fifo", "link"])
def test_a_fifo_or_link_at_the_write_ahead_log_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, what: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text(SUITE)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    if what == "fifo":
        os.mkfifo(tmp_path / "h.duckdb.wal")
    else:
        os.symlink(victim, tmp_path / "h.duckdb.wal")
    args = ["run", "s.yaml", "--providers", "mock", "--modes", "react", "--db", "h.duckdb",
            "--no-progress"]  # fmt: skip
    done = CliRunner().invoke(main, args)
    kind = "a FIFO" if what == "fifo" else "a symbolic link"
    assert done.exit_code == 2, done.output
    assert f"h.duckdb.wal is {kind}, not a regular file" in " ".join(done.output.split())
    assert victim.read_text() == "keep me"
    report = CliRunner().invoke(main, ["report", "--db", "h.duckdb", "--out", "out"])
    assert report.exit_code == 2, report.output
