"""Click commands ``harness report``, ``harness gate`` and ``harness baseline save``.

Register them in ``harness/cli.py`` with ``main.add_command(...)``. This module imports only
click at import time (pandas, scipy and duckdb load when a command runs), so ``harness --help``
stays fast. Exit codes: 0 success, 1 gate regression, 2 bad input (the message names the file,
run or field).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

if TYPE_CHECKING:
    import pandas as pd

    from harness.report.baseline import Baseline

__all__ = ["baseline", "gate", "report"]

F = TypeVar("F", bound=Callable[..., Any])
_DB_HELP = "The results database."
_RUN_HELP = "A run id, or 'latest'."


def _fail(message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    raise SystemExit(2)


def _db_options(func: F) -> F:
    func = click.option(
        "--run", "run", default="latest", show_default=True, metavar="ID|latest", help=_RUN_HELP
    )(func)
    return click.option(
        "--db",
        default="reports/harness.duckdb",
        show_default=True,
        type=click.Path(dir_okay=False),
        help=_DB_HELP,
    )(func)


def _load(db: str, run: str) -> tuple[str, pd.DataFrame]:
    from harness.report.loader import load_run

    return load_run(db, run)


def _guarded(action: Callable[[], int]) -> int:
    """Run ``action``, turning bad input into exit 2 with a one-line message."""
    from harness.errors import HarnessError

    try:
        return action()
    except ImportError as exc:
        _fail(f"{exc}: install the report dependencies (pandas, scipy, statsmodels, duckdb)")
    except HarnessError as exc:
        _fail(str(exc))


def _check_out_dir(out: str) -> None:
    """Create ``out`` and prove it writable, or raise ConfigError naming it and the fix."""
    import tempfile

    from harness.errors import ConfigError

    try:
        Path(out).mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out, prefix=".harness-probe-"):
            pass
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ConfigError(
            f"--out {out}: cannot write there ({reason}); pass a writable folder"
        ) from None


def _baseline_arg(db: str, value: str) -> tuple[Baseline | pd.DataFrame, str]:
    """``--baseline``: a baseline JSON file, else a run id in the database."""
    from harness.report.baseline import load_baseline

    if value.endswith(".json") or Path(value).is_file():
        return load_baseline(value), value
    run_id, frame = _load(db, value)
    return frame, f"run {run_id}"


@click.command("report")
@_db_options
@click.option(
    "--baseline",
    "baseline_ref",
    default=None,
    metavar="ID|FILE",
    help="Compare cell by cell with another run id or a baseline JSON file.",
)
@click.option(
    "--out",
    default="reports",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Folder for report.md and report.html.",
)
@click.option("--title", default=None, help="Report title (default: 'harness report — RUN').")
@click.option("--seed", default=0, show_default=True, type=int, help="Bootstrap seed.")
@click.option(
    "--resamples",
    default=2000,
    show_default=True,
    type=click.IntRange(100, 100_000),
    help="Bootstrap resamples.",
)
def report(
    db: str,
    run: str,
    baseline_ref: str | None,
    out: str,
    title: str | None,
    seed: int,
    resamples: int,
) -> None:
    """Write report.md and a self-contained report.html for a run."""

    def action() -> int:
        from harness.report.build import build_report
        from harness.report.render import write_report

        _check_out_dir(out)  # before any work: a bad --out is bad input (exit 2)
        run_id, frame = _load(db, run)
        base, label = _baseline_arg(db, baseline_ref) if baseline_ref else (None, None)
        rep = build_report(
            frame,
            base,
            title=title or f"harness report — {run_id}",
            baseline_label=label,
            n_resamples=resamples,
            seed=seed,
        )
        paths = write_report(rep, out)
        for verdict in rep.comparisons["verdict"].tolist():
            click.echo(verdict)
        for warning in rep.warnings:
            click.echo(f"warning: {warning}", err=True)
        click.echo(f"wrote {paths['md']} and {paths['html']} ({rep.n_results} results)")
        return 0

    raise SystemExit(_guarded(action))


@click.command("gate")
@_db_options
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
    """Fail (exit 1) when a run is incomplete (baseline cells missing, cells errored, another
    suite set) or regresses against the baseline: cost up, pass rate down, or cells that passed
    now failing. Writes $GITHUB_STEP_SUMMARY when set."""

    def action() -> int:
        from harness.report.gate import (
            GateThresholds,
            find_pyproject,
            run_gate,
            thresholds_from_pyproject,
            write_step_summary,
        )

        config = thresholds_from_pyproject(pyproject or find_pyproject())
        thresholds = GateThresholds().with_overrides(**config)
        thresholds = thresholds.with_overrides(
            max_cost_increase=max_cost_increase,
            max_pass_rate_drop=max_pass_rate_drop,
            allow_flips=allow_flips,
            allow_missing=allow_missing,
            significance=significance or None,
        )
        from harness.report.baseline import load_baseline

        base = load_baseline(baseline_file)
        run_id, frame = _load(db, run)
        result = run_gate(frame, base, thresholds)
        click.echo(f"run {run_id}")
        click.echo(result.to_text())
        if os.environ.get("GITHUB_ACTIONS") == "true":
            for line in result.annotations():
                click.echo(line)
        try:
            write_step_summary(result)
        except OSError as exc:
            click.echo(f"warning: cannot write $GITHUB_STEP_SUMMARY: {exc}", err=True)
        return result.exit_code

    raise SystemExit(_guarded(action))


@click.group("baseline")
def baseline() -> None:
    """Manage the committed baseline the gate compares runs with."""


@baseline.command("save")
@_db_options
@click.option(
    "-o",
    "--output",
    default="reports/baseline.json",
    show_default=True,
    type=click.Path(dir_okay=False),
    help="Where to write the baseline JSON.",
)
@click.option("--label", default=None, help="A note stored in the file (e.g. the branch).")
def baseline_save_command(db: str, run: str, output: str, label: str | None) -> None:
    """Write the baseline file of a run (one line per cell; commit it)."""

    def action() -> int:
        from harness.report.baseline import baseline_save

        run_id, frame = _load(db, run)
        doc = baseline_save(frame, output, run_id=run_id, label=label)
        totals = doc["totals"]
        click.echo(
            f"wrote {output}: run {run_id}, {totals['cells']} cells, {totals['passed']} passed"
        )
        return 0

    raise SystemExit(_guarded(action))
