"""The gate's count limits are shown exactly (adversary round 13, part B, found and not fixed
there): ``allow_flips = 9223372036854775807`` was printed ``9223372036854775808``, through a
float. Through the real CLI (click's runner) over a real DuckDB file and baseline."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main

BIG = 2**63 - 1


@pytest.mark.parametrize("how", ["pyproject", "flags"])
def test_a_huge_count_limit_is_shown_as_given(stored: Path, tmp_path: Path, how: str) -> None:
    db, baseline = stored / "h.duckdb", stored / "baseline.json"
    args = ["gate", "--db", str(db), "--baseline", str(baseline)]
    if how == "pyproject":
        pyproject = tmp_path / "pyproject.toml"
        pyproject.write_text(f"[tool.harness.gate]\nallow_flips = {BIG}\n", encoding="utf-8")
        args += ["--pyproject", str(pyproject)]
    else:
        args += ["--allow-missing", str(BIG), "--allow-flips", str(BIG)]
    result = CliRunner().invoke(main, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 0, result.output
    assert f"{BIG}" in result.output, result.output
    assert f"{BIG + 1}" not in result.output
