"""The gate: a run that must fail, a run that must pass, thresholds, the baseline file."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from harness.report import (
    GateThresholds,
    ReportInputError,
    baseline_save,
    load_baseline,
    run_gate,
    thresholds_from_pyproject,
    write_step_summary,
)

Rows = Callable[..., pd.DataFrame]


@pytest.fixture
def base_run(rows: Rows) -> pd.DataFrame:
    """16 cells: suites arith and files x 4 tasks x react, reflexion; every cell passes, $0.01."""
    return rows(
        *[
            {"suite": suite, "task_id": f"t{i}", "mode": mode, "cost_usd": 0.01}
            for suite in ("arith", "files")
            for i in range(4)
            for mode in ("react", "reflexion")
        ]
    )


@pytest.fixture
def baseline_file(base_run: pd.DataFrame, tmp_path: Path) -> Path:
    path = tmp_path / "reports" / "baseline.json"
    baseline_save(base_run, path, label="main")
    return path


def _cell(df: pd.DataFrame, suite: str, task: str, mode: str) -> pd.Series:
    return (df["suite"] == suite) & (df["task_id"] == task) & (df["mode"] == mode)


def test_regressed_run_fails_and_names_the_cells(
    base_run: pd.DataFrame, baseline_file: Path
) -> None:
    run = base_run.copy()
    run["cost_usd"] = run["cost_usd"] * 1.2
    flipped = _cell(run, "arith", "t1", "react")
    run.loc[flipped, ["passed", "finish_reason"]] = (False, "error_max_turns")

    result = run_gate(run, load_baseline(baseline_file))

    assert result.exit_code == 1
    assert not result.passed
    failed = {(c.name, c.scope) for c in result.failed_checks()}
    assert failed == {
        ("cost", "total"),
        ("cost", "suite arith"),
        ("cost", "suite files"),
        ("pass_rate", "total"),
        ("pass_rate", "suite arith"),  # -12.5 pts
        ("pass_rate", "live / react"),  # -12.5 pts
        ("flips", "total"),
    }
    total = next(c for c in result.checks if (c.name, c.scope) == ("cost", "total"))
    assert (total.baseline, total.current, total.change) == pytest.approx((0.16, 0.192, 0.2))
    rate = next(c for c in result.checks if c.name == "pass_rate")
    assert (rate.baseline, rate.current, rate.change) == pytest.approx((1.0, 15 / 16, 1 / 16))
    # The offending cells: the flipped one first, then every cell whose cost rose.
    first = result.offending.iloc[0]
    assert (first["reason"], first["suite"], first["task_id"], first["mode"]) == (
        "newly failing",
        "arith",
        "t1",
        "react",
    )
    assert len(result.offending) == 16
    text = result.to_text()
    assert text.startswith("harness gate: FAILED (7 of 12 checks)")
    assert "arith/t1 [react, live, e0]" in text
    assert "fail (error_max_turns)" in text
    assert "+20.0%" in text
    md = result.to_markdown()
    assert "### :x: harness gate: FAILED" in md
    assert "| newly failing | arith/t1 [react, live, e0] | pass | fail (error_max_turns) |" in md
    notes = result.annotations()
    assert (
        "::error title=harness gate::cost (total) rose by 20.0%25: $0.160 -> $0.192 "
        "(limit +10%25)" in notes
    )
    assert any("1 cell(s) passed in the baseline and fail now" in n for n in notes)


def test_clean_run_passes(base_run: pd.DataFrame, baseline_file: Path) -> None:
    run = base_run.copy()
    run["cost_usd"] = run["cost_usd"] * 1.05
    result = run_gate(run, baseline_file)  # a path works too
    assert result.exit_code == 0
    assert result.passed
    assert result.offending.empty
    assert result.warnings == []
    assert result.to_text().startswith(f"harness gate: PASSED (12 checks) against {baseline_file}")
    assert result.annotations() == []


def test_one_suite_over_budget_fails_alone(base_run: pd.DataFrame, baseline_file: Path) -> None:
    run = base_run.copy()
    run.loc[run["suite"] == "files", "cost_usd"] = 0.0115  # +15%
    run.loc[run["suite"] == "arith", "cost_usd"] = 0.009  # -10%
    result = run_gate(run, baseline_file)
    assert [(c.name, c.scope) for c in result.failed_checks()] == [("cost", "suite files")]
    assert set(result.offending["suite"]) == {"files"}
    assert set(result.offending["reason"]) == {"cost up (suite files)"}


def test_thresholds_are_inclusive_and_configurable(
    base_run: pd.DataFrame, baseline_file: Path
) -> None:
    run = base_run.copy()
    run["cost_usd"] = 0.011  # exactly +10%
    run.loc[_cell(run, "files", "t0", "reflexion"), "passed"] = False  # one flip: -6.25 pts
    strict = run_gate(run, baseline_file)
    # -6.25 pts in total, -12.5 in suite files and in live / reflexion.
    assert [(c.name, c.scope) for c in strict.failed_checks()] == [
        ("pass_rate", "total"),
        ("pass_rate", "suite files"),
        ("pass_rate", "live / reflexion"),
        ("flips", "total"),
    ]
    total_only = GateThresholds(max_pass_rate_drop=0.07, allow_flips=1)
    assert [c.scope for c in run_gate(run, baseline_file, total_only).failed_checks()] == [
        "suite files",
        "live / reflexion",
    ]
    lenient = run_gate(run, baseline_file, GateThresholds(max_pass_rate_drop=0.125, allow_flips=1))
    assert lenient.passed
    assert (
        run_gate(
            run,
            baseline_file,
            GateThresholds(max_cost_increase=0.05, max_pass_rate_drop=1, allow_flips=5),
        ).exit_code
        == 1
    )


def test_unmatched_cells_warn_but_do_not_fail(
    base_run: pd.DataFrame, baseline_file: Path, rows: Rows
) -> None:
    """With --allow-missing and the same suites, cells missing, new or on another model are
    warnings; the thresholds gate the rest."""
    run = base_run[~_cell(base_run, "arith", "t0", "react")].copy()
    run.loc[_cell(run, "arith", "t1", "react"), ["passed", "model"]] = (False, "mock-2")
    run.loc[_cell(run, "files", "t2", "react"), "cost_usd"] = None
    run = pd.concat([run, rows({"suite": "arith", "task_id": "n1", "cost_usd": 5.0})])
    result = run_gate(run, baseline_file, GateThresholds(allow_missing=1))
    assert result.passed  # the flip is on a cell whose model changed: not gated
    joined = "\n".join(result.warnings)
    assert "1 baseline cell(s) not in this run: arith/t0 [react, live, e0]" in joined
    assert "1 cell(s) not in the baseline" in joined
    assert "arith/n1 [react, live, e0]" in joined
    assert "ran a different model than the baseline" in joined
    assert "arith/t1 [react, live, e0]" in joined
    assert "1 cell(s) with unknown cost left out of the cost checks" in joined
    assert all(line.startswith("::warning") for line in result.annotations())


def test_cost_from_zero_fails(rows: Rows) -> None:
    base = rows({"cost_usd": 0.0})
    result = run_gate(rows({"cost_usd": 0.001}), base)
    assert result.exit_code == 1
    assert "rose from 0" in "\n".join(result.annotations())


def test_empty_run_is_bad_input(base_run: pd.DataFrame, baseline_file: Path) -> None:
    with pytest.raises(ReportInputError, match="no results"):
        run_gate(base_run.iloc[0:0], baseline_file)


# --- thresholds -----------------------------------------------------------------------------------


def test_thresholds_from_pyproject(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text(
        '[project]\nname = "x"\n\n[tool.harness.gate]\nmax-cost-increase = 0.2\n'
        "max_pass_rate_drop = 0.1\nallow-flips = 2\n"
    )
    config = thresholds_from_pyproject(path)
    assert config == {"max_cost_increase": 0.2, "max_pass_rate_drop": 0.1, "allow_flips": 2}
    t = (
        GateThresholds()
        .with_overrides(**config)
        .with_overrides(allow_flips=0, max_cost_increase=None)
    )
    assert (t.max_cost_increase, t.max_pass_rate_drop, t.allow_flips) == (0.2, 0.1, 0)
    assert thresholds_from_pyproject(None) == {}
    empty = tmp_path / "empty.toml"
    empty.write_text("[project]\n")
    assert thresholds_from_pyproject(empty) == {}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("max_cost = 1", "unknown key 'max_cost'"),
        ("allow_flips = 1.5", "allow_flips: expected an integer"),
        ('max-cost-increase = "10%"', "max-cost-increase: expected a number"),
        ("max_pass_rate_drop = 2", "between 0 and 1"),
    ],
)
def test_bad_pyproject_thresholds(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text(f"[tool.harness.gate]\n{body}\n")
    with pytest.raises(ReportInputError, match=message):
        GateThresholds().with_overrides(**thresholds_from_pyproject(path))


def test_unreadable_pyproject(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text("[tool.harness.gate\n")
    with pytest.raises(ReportInputError, match=r"pyproject\.toml: cannot read"):
        thresholds_from_pyproject(path)


# --- step summary ---------------------------------------------------------------------------------


def test_step_summary_is_appended(
    base_run: pd.DataFrame, baseline_file: Path, tmp_path: Path
) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("# earlier step\n")
    result = run_gate(base_run, baseline_file)
    assert write_step_summary(result, {"GITHUB_STEP_SUMMARY": str(summary)}) == summary
    text = summary.read_text()
    assert text.startswith("# earlier step\n### :white_check_mark: harness gate: PASSED")
    assert write_step_summary(result, {}) is None


# --- the baseline file ----------------------------------------------------------------------------


def test_baseline_round_trip(base_run: pd.DataFrame, baseline_file: Path) -> None:
    doc = json.loads(baseline_file.read_text())
    assert (doc["format"], doc["version"], doc["run_id"], doc["label"]) == (
        "harness-baseline",
        1,
        "run-1",
        "main",
    )
    assert doc["totals"] == {
        "cells": 16,
        "passed": 16,
        "pass_rate": 1.0,
        "cost_usd": 0.16,
        "cost_unknown": 0,
    }
    assert doc["suites"]["arith"]["cells"] == 8
    lines = baseline_file.read_text().splitlines()
    assert sum(line.startswith('  {"suite": ') for line in lines) == 16  # one line per cell
    loaded = load_baseline(baseline_file)
    assert len(loaded.cells) == 16
    assert loaded.cells["cost_usd"].sum() == pytest.approx(0.16)
    assert loaded.meta["label"] == "main"


def test_baseline_keeps_unknown_cost_as_null(rows: Rows, tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    doc = baseline_save(rows({"cost_usd": None}), path)
    assert doc["cells"][0]["cost_usd"] is None
    assert doc["totals"]["cost_usd"] is None
    assert doc["totals"]["cost_unknown"] == 1
    assert load_baseline(path).cells["cost_usd"].isna().all()


def test_baseline_save_refuses_an_empty_run(rows: Rows, tmp_path: Path) -> None:
    with pytest.raises(ReportInputError, match="no results"):
        baseline_save(rows({}).iloc[0:0], tmp_path / "b.json")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not a readable JSON baseline"),
        ('{"format": "other"}', "field format"),
        ('{"format": "harness-baseline", "version": 99, "cells": []}', "field version"),
        ('{"format": "harness-baseline", "version": 1}', "field cells"),
        (
            '{"format": "harness-baseline", "version": 1, "cells": [{"suite": "s"}]}',
            r"field cells\[0\]\.task_id: missing",
        ),
        (
            '{"format": "harness-baseline", "version": 1, "cells": [{"suite": "s", "task_id": "t",'
            ' "mode": "m", "provider": "p", "epoch": 0, "passed": "yes"}]}',
            r"cells\[0\]\.passed: expected true or false",
        ),
        (
            '{"format": "harness-baseline", "version": 1, "cells": [{"suite": "s", "task_id": "t",'
            ' "mode": "m", "provider": "p", "epoch": 0, "passed": true, "cost_usd": "1"}]}',
            r"cells\[0\]\.cost_usd: expected a number or null",
        ),
    ],
)
def test_bad_baseline_files_name_the_field(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "baseline.json"
    path.write_text(content)
    with pytest.raises(ReportInputError, match=message) as info:
        load_baseline(path)
    assert str(path) in str(info.value)


def test_missing_baseline_says_how_to_make_one(tmp_path: Path) -> None:
    with pytest.raises(ReportInputError, match="harness baseline save"):
        load_baseline(tmp_path / "nope.json")


def test_an_incomplete_run_fails_before_the_thresholds(
    base_run: pd.DataFrame, baseline_file: Path
) -> None:
    partial = base_run[base_run["suite"] == "arith"].iloc[:1].copy()
    result = run_gate(partial, baseline_file)
    assert result.exit_code == 1
    failed = {c.name for c in result.failed_checks()}
    assert {"missing_cells", "suites"} <= failed
    assert "baseline cell(s) are missing from the run" in "\n".join(result.annotations())
    allowed = run_gate(partial, baseline_file, GateThresholds(allow_missing=len(base_run)))
    assert "missing_cells" not in {c.name for c in allowed.failed_checks()}
    assert "suites" in {c.name for c in allowed.failed_checks()}


def test_an_errored_cell_fails_the_gate(base_run: pd.DataFrame, baseline_file: Path) -> None:
    run = base_run.copy()
    run["status"] = run["passed"].map({True: "passed", False: "failed"})
    run["error"] = None
    first = run.index[0]
    run.loc[first, ["passed", "status", "error"]] = (False, "error", "CassetteMiss: no answer")
    result = run_gate(run, baseline_file)
    assert [c.name for c in result.failed_checks()] == ["errored_cells"]
    assert "CassetteMiss" in result.to_text()


def test_significance_mode_forgives_one_flaky_cell(
    base_run: pd.DataFrame, baseline_file: Path
) -> None:
    run = base_run.copy()
    passing = run.index[run["passed"]]
    run.loc[passing[0], "passed"] = False  # one cell flips
    strict = run_gate(run, baseline_file)
    assert "flips" in {c.name for c in strict.failed_checks()}
    lenient = run_gate(run, baseline_file, GateThresholds(significance=True))
    assert lenient.passed, lenient.to_text()
    assert "sign test p=" in lenient.to_text() or "not significant" in str(lenient.checks)


def test_one_group_dropping_18_points_fails_while_the_total_drops_2(rows: Rows) -> None:
    # 9 (provider, mode) groups of 100 tasks; in llamaserver-gemma / react 18 cells flip:
    # the group drops 18 points, the total 2 (18 of 900), within a 5-point total limit.
    groups = [(p, m) for p in ("llamaserver-gemma", "llamacpp-gemma", "live") for m in
              ("react", "reflexion", "plan_and_solve")]  # fmt: skip
    base = rows(
        *[
            {"provider": p, "mode": m, "task_id": f"t{i:03d}", "passed": i % 2 == 0}
            for p, m in groups
            for i in range(100)
        ]
    )
    run = base.copy()
    group = (run["provider"] == "llamaserver-gemma") & (run["mode"] == "react")
    flip = group & run["passed"] & (run["task_id"] < "t036")
    assert int(flip.sum()) == 18
    run.loc[flip, "passed"] = False
    result = run_gate(run, base, GateThresholds(allow_flips=30))
    by_scope = {(c.name, c.scope): c for c in result.checks}
    total = by_scope[("pass_rate", "total")]
    assert total.ok
    assert total.change == pytest.approx(0.02)
    bad = by_scope[("pass_rate", "llamaserver-gemma / react")]
    assert not bad.ok
    assert (bad.baseline, bad.current, bad.change) == pytest.approx((0.5, 0.32, 0.18))
    assert [(c.name, c.scope) for c in result.failed_checks()] == [
        ("pass_rate", "llamaserver-gemma / react")
    ]
    assert result.exit_code == 1
    lines = result.to_text().splitlines()
    row = next(line for line in lines if "llamaserver-gemma / react" in line)
    assert row.split() == ["FAIL", "pass_rate", "llamaserver-gemma", "/", "react", "50.0%",
                           "32.0%", "-18.0", "pts", "-5", "pts"]  # fmt: skip
    assert len(result.offending) == 18


def test_failing_rows_print_enough_digits_to_show_the_change(rows: Rows) -> None:
    base = rows({"cost_usd": 0.762}, {"task_id": "u", "cost_usd": 0.0})
    run = rows({"cost_usd": 0.7620001}, {"task_id": "u", "cost_usd": 0.0})
    result = run_gate(run, base, GateThresholds(max_cost_increase=0))
    check = result.failed_checks()[0]
    text = result.to_text()
    assert "$0.762 " not in text
    assert "$0.7620000  $0.7620001  +0.000013%" in text
    from harness.report._gate_result import check_message

    assert check_message(check) == (
        "cost (total) rose by 0.000013%: $0.7620000 -> $0.7620001 (limit +0%)"
    )


def test_baseline_cells_outside_the_requested_matrix_are_not_requested(
    base_run: pd.DataFrame,
) -> None:
    from harness.report import RequestedMatrix

    # The run asked for react on tasks t0 and t1 only.
    asked = RequestedMatrix(
        suites=("arith", "files"), modes=("react",), providers=("live",), epochs=1,
        tasks=("t0", "t1"),
    )  # fmt: skip
    run = base_run[asked.contains(base_run)]
    assert len(run) == 4
    result = run_gate(run, base_run, requested=asked)
    assert result.passed, result.to_text()
    missing = next(c for c in result.checks if c.name == "missing_cells")
    assert (missing.baseline, missing.change) == (4.0, 0.0)
    assert result.counts["not_requested"] == 12
    assert any(
        w.startswith("12 baseline cell(s) not requested by this run") for w in result.warnings
    )
    # Without the matrix, the same run is incomplete.
    assert not run_gate(run, base_run).passed
    # A requested cell that did not run is still missing.
    short = run.iloc[1:]
    assert [c.name for c in run_gate(short, base_run, requested=asked).failed_checks()] == [
        "missing_cells"
    ]
