"""A baseline whose object gives a key twice (adversary round 8, issue 34). Before: a cell
written ``"passed": true, "passed": false`` was read as failed (Python keeps the last key) while
a reviewer's tool may show it passed; ``harness gate`` compared against it and exited 0. Now
such a file is refused as it loads, naming the key, exit 2, in ``gate`` and ``report``."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main

SUITE = "suite: s\ntasks:\n  - {id: a, prompt: hi, expect: {kind: contains, value: hi}, mock: {turns: [{text: hi}]}}\n"  # noqa: E501


@pytest.mark.timeout(600)  # the first CLI run in a process imports for a minute at load 20
@pytest.mark.parametrize("command", ["gate", "report"])
def test_a_key_given_twice_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text(SUITE)
    runner = CliRunner()
    ran = runner.invoke(main, ["run", "s.yaml", "--providers", "mock", "--modes", "react",
                               "--db", "h.duckdb", "--no-progress"])  # fmt: skip
    assert ran.exit_code == 0, ran.output
    saved = runner.invoke(main, ["baseline", "save", "--db", "h.duckdb", "-o", "base.json"])
    assert saved.exit_code == 0, saved.output
    text = (tmp_path / "base.json").read_text()
    assert text.count('"passed": true') == 1
    (tmp_path / "base.json").write_text(
        text.replace('"passed": true', '"passed": true, "passed": false')
    )
    args = ["gate", "--db", "h.duckdb", "--baseline", "base.json"]
    if command == "report":
        args = ["report", "--db", "h.duckdb", "--baseline", "base.json", "--out", "rep"]
    done = runner.invoke(main, args)
    assert done.exit_code == 2, done.output
    assert "key 'passed' is given twice in one object" in " ".join(done.output.split())
