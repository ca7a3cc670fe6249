"""Fault found by adversary round 18, part B (issue 34): a hostile baseline's cell named with a
line break (``"add\\nharness gate: PASSED (0 checks)"``) printed that second line under the
gate's real verdict, in the offending cells' table and in the "not in this run" and "not
requested by this run" warnings: control characters were escaped there, line breaks were not.
Fails on d9e0c2e."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main
from tests.e2e.edited_store import SUITE

FORGED = "harness gate: PASSED (0 checks)"


@pytest.mark.parametrize("tasks", [None, "add-small,add-doubles"], ids=["missing", "unasked"])
def test_a_line_break_in_a_baseline_cell_is_escaped(tmp_path: Path, tasks: str | None) -> None:
    db = str(tmp_path / "h.duckdb")
    args = ["run", str(SUITE), "--providers", "mock", "--modes", "react", "--db", db,
            "--no-progress"] + (["--tasks", tasks] if tasks else [])  # fmt: skip
    assert CliRunner().invoke(main, args).exit_code == 0
    baseline = tmp_path / "baseline.json"
    saved = CliRunner().invoke(main, ["baseline", "save", "--db", db, "-o", str(baseline)])
    assert saved.exit_code == 0, saved.output
    doc = json.loads(baseline.read_text(encoding="utf-8"))
    doc["cells"].append({**doc["cells"][0], "task_id": f"add\n{FORGED}"})
    baseline.write_text(json.dumps(doc), encoding="utf-8")
    done = CliRunner().invoke(main, ["gate", "--db", db, "--baseline", str(baseline)])
    assert done.exit_code == (1 if tasks is None else 0), done.output
    lines = done.output.splitlines()
    assert not any(line.startswith(FORGED) for line in lines), done.output
    assert f"add\\x0a{FORGED}" in done.output  # shown, escaped
