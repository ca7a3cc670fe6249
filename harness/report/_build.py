"""Assemble every table of a report from one results DataFrame (and optionally a baseline)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pandas as pd

from harness.report._baseline import Baseline
from harness.report._bfcl import BfclTables, bfcl_tables
from harness.report._cells import failing_cells_frame, task_grid_frame
from harness.report._compare import comparisons_frame
from harness.report._diff import diff_counts, diff_frame
from harness.report._headline import Verdict, verdicts
from harness.report._humaneval import HumanEvalTables, humaneval_tables
from harness.report._models import model_comparisons
from harness.report._providers import priced_as, scripted_providers
from harness.report._tables import (
    CELL_KEY,
    GROUP,
    finish_reason_frame,
    pass_k_frame,
    prepare_results,
    scored,
    summary_frame,
)
from harness.report._verdicts import headline, sort_summary

__all__ = ["Report", "build_report", "iteration_stats"]


@dataclass
class Report:
    """Everything a rendered report shows; every table is a plain DataFrame."""

    title: str
    run_ids: list[str]
    n_results: int
    summary: pd.DataFrame
    finish_reasons: pd.DataFrame
    pass_k: pd.DataFrame
    comparisons: pd.DataFrame
    iterations: pd.DataFrame
    diff: pd.DataFrame | None = None
    diff_counts: dict[str, int] | None = None
    baseline_label: str | None = None
    warnings: list[str] = field(default_factory=list)
    generated_at: str = ""
    alpha: float = 0.05
    #: Cells that could not be scored (status ``error``): suite, task_id, mode, provider,
    #: epoch and the cause; left out of every figure above.
    errors: pd.DataFrame | None = None
    #: Provider -> the model its costs are priced as (profiles with ``price_as``).
    priced_as: dict[str, str] = field(default_factory=dict)
    #: The task x (mode, provider) grid of epoch outcomes (:func:`task_grid_frame`).
    grid: pd.DataFrame | None = None
    #: The failed and errored cells with the grader's explanation or the error.
    failures: pd.DataFrame | None = None
    #: Providers whose replies are scripted (mock): suite checks, outside the claim family.
    scripted: frozenset[str] = frozenset()
    #: One verdict sentence per real provider (the full sentences of :attr:`verdicts`).
    headline: list[str] = field(default_factory=list)
    #: What the report opens with: per real provider, a short headline read in ten seconds
    #: and the full sentence beneath it.
    verdicts: list[Verdict] = field(default_factory=list)
    #: The prepared cells (every row, errored ones too): the JSON report's totals.
    cells: pd.DataFrame | None = None
    #: BFCL accuracy per category and group, and its mode comparisons (None: no BFCL cell).
    bfcl: BfclTables | None = None
    #: HumanEval pass@1 with the published figure, and its mode comparisons (None: no cell).
    humaneval: HumanEvalTables | None = None
    #: Real providers (model x server x wire format) compared on shared cells, per mode.
    models: pd.DataFrame = field(default_factory=pd.DataFrame)


def iteration_stats(p: pd.DataFrame) -> pd.DataFrame:
    """Five-number summary and mean of ``iterations`` per (mode, provider)."""
    columns = [*GROUP, "n", "min", "q1", "median", "q3", "max", "mean"]
    if p.empty:
        return pd.DataFrame(columns=columns)
    g = p.groupby(GROUP, sort=True)["iterations"]
    out = pd.DataFrame(
        {
            "n": g.count(),
            "min": g.min(),
            "q1": g.quantile(0.25),
            "median": g.median(),
            "q3": g.quantile(0.75),
            "max": g.max(),
            "mean": g.mean(),
        }
    )
    return out.reset_index()[columns]


def build_report(
    df: pd.DataFrame,
    baseline: Baseline | pd.DataFrame | None = None,
    *,
    title: str = "harness report",
    baseline_label: str | None = None,
    modes: Sequence[str] | None = None,
    alpha: float = 0.05,
    k: int | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Report:
    """Compute the summary, finish reasons, pass@k, paired comparisons, iteration stats and,
    with ``baseline`` (a loaded baseline file or another run's results), the per-cell diff."""
    p, warnings = prepare_results(df)
    run_ids = sorted({str(r) for r in p["run_id"].dropna().unique()})
    diff = counts = None
    label = baseline_label
    if baseline is not None:
        if isinstance(baseline, Baseline):
            base = baseline.cells
            label = label or baseline.source
        else:
            base, more = prepare_results(baseline, source="baseline")
            warnings += more
            label = label or "baseline run"
        diff = diff_frame(p, base)
        counts = diff_counts(diff)
    providers = sorted({str(v) for v in p["provider"]})
    scripted = scripted_providers(providers)
    comparisons = comparisons_frame(
        p, modes=modes, alpha=alpha, n_resamples=n_resamples, seed=seed, scripted=scripted
    )
    summary = sort_summary(summary_frame(p), scripted)
    unknown = int(p["cost_usd"].isna().sum())
    if unknown and len(p):
        warnings.append(
            f"cost unknown for {unknown} of {len(p)} cell(s); cost figures use known costs only"
        )
    return Report(
        title=title,
        run_ids=run_ids,
        n_results=len(p),
        summary=summary,
        finish_reasons=finish_reason_frame(p),
        pass_k=pass_k_frame(scored(p), k),
        comparisons=comparisons,
        iterations=iteration_stats(scored(p)),
        diff=diff,
        diff_counts=counts,
        baseline_label=label,
        warnings=warnings,
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
        alpha=alpha,
        errors=p.loc[p["status"] == "error", [*CELL_KEY, "error"]].reset_index(drop=True),
        priced_as=priced_as(providers),
        grid=task_grid_frame(p),
        failures=failing_cells_frame(p),
        scripted=scripted,
        headline=headline(summary, comparisons, scripted, alpha),
        verdicts=verdicts(summary, comparisons, scripted, alpha, p),
        cells=p,
        bfcl=bfcl_tables(
            p, modes=modes, alpha=alpha, n_resamples=n_resamples, seed=seed, scripted=scripted
        ),
        humaneval=humaneval_tables(
            p, modes=modes, alpha=alpha, n_resamples=n_resamples, seed=seed, scripted=scripted
        ),
        models=model_comparisons(
            p, alpha=alpha, n_resamples=n_resamples, seed=seed, scripted=scripted
        ),
    )
