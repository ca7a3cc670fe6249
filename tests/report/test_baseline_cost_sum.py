"""A hostile baseline whose costs are each finite but add up past the largest float (adversary
round 6, issue 34): two cells of 1.7e308 dollars made ``harness gate`` fail with
``OverflowError: cannot convert float infinity to integer`` (a traceback, exit 1). Now the
baseline is refused as it loads: one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main
from harness.errors import ReportInputError
from harness.report._baseline import BASELINE_FORMAT, BASELINE_VERSION, load_baseline
from tests import suite_files


def _baseline(path: Path, *costs: float) -> Path:
    cells = [
        {"suite": "latency", "task_id": f"t{i}", "mode": "react", "provider": "mock", "epoch": 0,
         "passed": True, "cost_usd": cost}
        for i, cost in enumerate(costs)
    ]  # fmt: skip
    doc = {"format": BASELINE_FORMAT, "version": BASELINE_VERSION, "cells": cells}
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_costs_adding_up_past_the_largest_float_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ReportInputError, match="add up past the largest number"):
        load_baseline(_baseline(tmp_path / "base.json", 1.7e308, 1.7e308))
    assert load_baseline(_baseline(tmp_path / "ok.json", 1.7e308, 0.0)).cells is not None


def test_gate_on_such_a_baseline_is_one_line_exit_2(tmp_path: Path) -> None:
    suite = suite_files.latency_suite(tmp_path, 2, 0.0)
    db = tmp_path / "h.duckdb"
    run = CliRunner().invoke(main, ["run", str(suite), "--providers", "mock", "--modes", "react",
                                    "--no-progress", "--db", str(db)])  # fmt: skip
    assert run.exit_code == 0, run.output
    base = _baseline(tmp_path / "base.json", 1.7e308, 1.7e308)
    done = CliRunner().invoke(main, ["gate", "--db", str(db), "--baseline", str(base)])
    assert done.exit_code == 2, done.output
    assert done.exception is None or isinstance(done.exception, SystemExit), done.exception
    assert "add up past the largest number" in " ".join(done.output.split())
