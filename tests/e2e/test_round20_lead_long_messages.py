"""A one-line error or warning of the CLI is bounded (issue 34, adversary round 20, part B,
fixed by the lead): a baseline naming a 1 MB key twice printed the whole key in ``harness
gate``'s one-line error, a line of a megabyte. ``fail`` and ``warn`` now cut their line to
``LINE_LIMIT`` characters, saying how many were left out. Both tests fail on b9240bc."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness._oneline import LINE_LIMIT
from harness.cli._common import warn
from tests.e2e.edited_store import said


def test_a_megabyte_key_given_twice_in_a_baseline_is_named_on_a_bounded_line(
    stored: Path, tmp_path: Path
) -> None:
    shutil.copytree(stored, tmp_path, dirs_exist_ok=True)
    key = "k" * 1_000_000
    text = (tmp_path / "baseline.json").read_text()
    (tmp_path / "baseline.json").write_text(
        text.replace('"passed": true', f'"passed": true, "{key}": 1, "{key}": 2', 1)
    )
    base = tmp_path / "baseline.json"
    shown = said(["gate", "--db", str(tmp_path / "h.duckdb"), "--baseline", str(base)], 2)
    assert "not a readable JSON baseline: key 'kkk" in shown
    assert len(shown) < LINE_LIMIT + 400  # 1,000,080 characters before
    assert "characters more)" in shown


def test_a_warning_is_cut_too(capsys: pytest.CaptureFixture[str]) -> None:
    warn("w" * 50_000)
    err = capsys.readouterr().err
    assert err.startswith("warning: www")
    assert err.endswith(f"... ({50_000 + len('warning: ') - LINE_LIMIT} characters more)\n")
