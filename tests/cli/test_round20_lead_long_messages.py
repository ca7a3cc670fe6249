"""A one-line error or warning of the CLI is bounded (issue 34, adversary round 20, part B,
fixed by the lead): a baseline naming a 1 MB key twice printed the whole key in ``harness
gate``'s one-line error, a line of a megabyte. ``fail`` and ``warn`` now cut their line to
``LINE_LIMIT`` characters, saying how many were left out. The first test fails on b9240bc."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from harness._oneline import LINE_LIMIT
from harness.cli import main
from harness.cli._common import warn

SUITE = "suite: s\ntasks:\n  - {id: a, prompt: hi, expect: {kind: contains, value: hi}, mock: {turns: [{text: hi}]}}\n"  # noqa: E501


@pytest.mark.timeout(600)  # the first CLI run in a process imports for a minute at load 20
def test_a_megabyte_key_given_twice_in_a_baseline_is_named_on_a_bounded_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text(SUITE)
    runner = CliRunner()
    ran = runner.invoke(main, ["run", "s.yaml", "--providers", "mock", "--modes", "react",
                               "--db", "h.duckdb", "--no-progress"])  # fmt: skip
    assert ran.exit_code == 0, ran.output
    saved = runner.invoke(main, ["baseline", "save", "--db", "h.duckdb", "-o", "base.json"])
    assert saved.exit_code == 0, saved.output
    key = "k" * 1_000_000
    text = (tmp_path / "base.json").read_text()
    (tmp_path / "base.json").write_text(
        text.replace('"passed": true', f'"passed": true, "{key}": 1, "{key}": 2', 1)
    )
    done = runner.invoke(main, ["gate", "--db", "h.duckdb", "--baseline", "base.json"])
    assert done.exit_code == 2, done.output[:3000]
    assert done.output.startswith("error: base.json: not a readable JSON baseline: key 'kkk")
    assert len(done.output) < LINE_LIMIT + 200  # 1,000,080 characters before
    assert "characters more)" in done.output


def test_a_warning_is_cut_too(capsys: pytest.CaptureFixture[str]) -> None:
    warn("w" * 50_000)
    err = capsys.readouterr().err
    assert err.startswith("warning: www")
    assert err.endswith(f"... ({50_000 + len('warning: ') - LINE_LIMIT} characters more)\n")
