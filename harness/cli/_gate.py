"""``harness gate``: fail a run that is incomplete or regresses against the committed baseline.

Exit codes: 0 pass, 1 regression or incomplete run, 2 bad input (the message names the file,
run or field).
"""

from __future__ import annotations

import os

import click

from harness.cli._common import db_options, echo, echo_line, guarded, load

__all__ = ["COMMANDS", "gate"]


@click.command("gate")
@db_options
@click.option(
    "--baseline",
    "baseline_file",
    default="reports/baseline.json",
    show_default=True,
    type=click.Path(dir_okay=False),
    help="The baseline file written by `harness baseline save`.",
)
@click.option(
    "--max-cost-increase",
    type=click.FloatRange(0),
    default=None,
    help="Relative; default 0.10 (= +10%) or [tool.harness.gate].",
)
@click.option(
    "--max-pass-rate-drop",
    type=click.FloatRange(0, 1),
    default=None,
    help="Absolute; default 0.05 (= 5 points) or [tool.harness.gate].",
)
@click.option(
    "--allow-flips",
    type=click.IntRange(0),
    default=None,
    help="Cells passing in the baseline that may fail now; default 0.",
)
@click.option(
    "--allow-missing",
    type=click.IntRange(0),
    default=None,
    help="Baseline cells the run may lack; default 0 (an incomplete run fails the gate).",
)
@click.option(
    "--significance",
    is_flag=True,
    default=None,
    help="Live providers: fail only on regressions that are also significant over the paired "
    "tasks (p < 0.05). Replayed runs are deterministic: keep the exact thresholds.",
)
@click.option(
    "--pyproject",
    type=click.Path(dir_okay=False),
    default=None,
    help="Where to read [tool.harness.gate] (default: the nearest pyproject.toml).",
)
def gate(
    db: str,
    run: str,
    baseline_file: str,
    max_cost_increase: float | None,
    max_pass_rate_drop: float | None,
    allow_flips: int | None,
    allow_missing: int | None,
    significance: bool | None,
    pyproject: str | None,
) -> None:
    """Fail (exit 1) when a run is incomplete (baseline cells of its requested matrix missing,
    cells errored, another suite set) or regresses against the baseline: cost up, pass rate
    down (in total, per suite or per provider and mode), or cells that passed now failing.
    Baseline cells outside the run's matrix are listed as not requested. Writes
    $GITHUB_STEP_SUMMARY when set."""

    def action() -> int:
        from harness.report._gate import (
            find_pyproject,
            run_gate,
            thresholds_from_pyproject,
            write_step_summary,
        )
        from harness.report._gate_result import GateThresholds

        config = thresholds_from_pyproject(pyproject or find_pyproject())
        thresholds = GateThresholds().with_overrides(**config)
        thresholds = thresholds.with_overrides(
            max_cost_increase=max_cost_increase,
            max_pass_rate_drop=max_pass_rate_drop,
            allow_flips=allow_flips,
            allow_missing=allow_missing,
            significance=significance or None,
        )
        from harness.report._baseline import load_baseline
        from harness.report._requested import load_requested

        base = load_baseline(baseline_file)
        run_id, frame = load(db, run)
        # Completeness is judged against the matrix the run was asked for (bench_runs).
        result = run_gate(frame, base, thresholds, requested=load_requested(db, run_id))
        echo_line(f"run {run_id}")
        echo(result.to_text())
        if os.environ.get("GITHUB_ACTIONS") == "true":
            for line in result.annotations():
                echo(line)
        try:
            write_step_summary(result)
        except OSError as exc:
            echo(f"warning: cannot write $GITHUB_STEP_SUMMARY: {exc}", err=True)
        return result.exit_code

    raise SystemExit(guarded(action))


#: The commands this module adds to the root group.
COMMANDS: tuple[click.Command, ...] = (gate,)
