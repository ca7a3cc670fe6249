"""Fault found by adversary round 18, part B (issue 34): ``harness cassettes lint`` printed a
file's name as it was: a cassette named ``"x\\nOK: 3024 cassette(s) clean.yaml"`` printed that
second line of its own under a finding (ESC was escaped, the line break was not). Fails on
d9e0c2e."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from harness.cli import main

FORGED = "OK: 3024 cassette(s) clean"


def test_a_line_break_in_a_cassette_s_name_is_escaped(tmp_path: Path) -> None:
    (tmp_path / f"x\n{FORGED}.yaml").write_text("interactions: [\n", encoding="utf-8")
    done = CliRunner().invoke(main, ["cassettes", "lint", str(tmp_path)])
    assert done.exit_code == 2, done.output  # corrupt
    assert not any(line.startswith(FORGED) for line in done.output.splitlines()), done.output
    assert f"x\\x0a{FORGED}.yaml: corrupt" in done.output
