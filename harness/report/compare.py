"""Paired comparisons of modes on the same cells, with a plain-words verdict for each.

Two modes are compared on the cells they share: same suite, task, provider and epoch. The pass
rate difference is tested with McNemar's exact test on the discordant pairs; when more than two
modes are compared, the p-values are Holm-adjusted over the whole table. Pass-rate and cost
differences get bootstrap intervals that resample whole tasks. A difference is called a
difference only when the (adjusted) p-value is below ``alpha`` and, when tasks were run for
several epochs (pairs of one task are not independent), the task-bootstrap interval also
excludes zero. Everything else reads "no evidence of a difference".
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from harness.report._format import fmt_p, fmt_pts, fmt_ratio, fmt_usd
from harness.report.stats import cluster_bootstrap, holm_adjust, mcnemar_exact
from harness.report.tables import prepare_results

__all__ = ["COMPARISON_COLUMNS", "comparisons_frame", "paired_comparisons"]

COMPARISON_COLUMNS = [
    "provider",
    "mode_a",
    "mode_b",
    "n_pairs",
    "tasks",
    "a_passed",
    "b_passed",
    "both_passed",
    "neither_passed",
    "only_a",
    "only_b",
    "rate_a",
    "rate_b",
    "diff",
    "diff_ci_low",
    "diff_ci_high",
    "p_value",
    "p_holm",
    "cost_pairs",
    "cost_diff",
    "cost_diff_ci_low",
    "cost_diff_ci_high",
    "cost_ratio",
    "cost_ratio_ci_low",
    "cost_ratio_ci_high",
    "verdict",
    "cost_verdict",
]
_PAIR_KEY = ["suite", "task_id", "epoch"]


def _one_pair(
    wide_pass: pd.DataFrame,
    wide_cost: pd.DataFrame,
    a: str,
    b: str,
    *,
    n_resamples: int,
    seed: int,
) -> dict[str, Any]:
    both = wide_pass[[a, b]].dropna()
    pa = both[a].to_numpy(dtype=bool)
    pb = both[b].to_numpy(dtype=bool)
    keys = both.index.to_frame(index=False)[["suite", "task_id"]]
    clusters = keys.groupby(["suite", "task_id"], sort=False).ngroup().to_numpy()
    diff = cluster_bootstrap(
        pb.astype(float) - pa.astype(float), clusters, n_resamples=n_resamples, seed=seed
    )
    costs = wide_cost.reindex(both.index)[[a, b]].dropna()
    cost_keys = costs.index.to_frame(index=False)[["suite", "task_id"]]
    cost_clusters = cost_keys.groupby(["suite", "task_id"], sort=False).ngroup().to_numpy()
    ca, cb = costs[a].to_numpy(dtype=float), costs[b].to_numpy(dtype=float)
    cost_diff = cluster_bootstrap(cb - ca, cost_clusters, n_resamples=n_resamples, seed=seed)
    ratio = cluster_bootstrap(cb, cost_clusters, denominator=ca, n_resamples=n_resamples, seed=seed)
    n = len(both)
    only_a = int((pa & ~pb).sum())
    only_b = int((pb & ~pa).sum())
    return {
        "mode_a": a,
        "mode_b": b,
        "n_pairs": n,
        "tasks": int(clusters.max()) + 1 if n else 0,
        "epochs_repeat": bool(n and keys.duplicated().any()),
        "a_passed": int(pa.sum()),
        "b_passed": int(pb.sum()),
        "both_passed": int((pa & pb).sum()),
        "neither_passed": int((~pa & ~pb).sum()),
        "only_a": only_a,
        "only_b": only_b,
        "rate_a": float(pa.mean()) if n else math.nan,
        "rate_b": float(pb.mean()) if n else math.nan,
        "diff": diff.estimate,
        "diff_ci_low": diff.low,
        "diff_ci_high": diff.high,
        "diff_excludes_zero": diff.excludes_zero(),
        "p_value": mcnemar_exact(only_a, only_b) if n else math.nan,
        "cost_pairs": len(costs),
        "cost_diff": cost_diff.estimate,
        "cost_diff_ci_low": cost_diff.low,
        "cost_diff_ci_high": cost_diff.high,
        "cost_diff_excludes_zero": cost_diff.excludes_zero(),
        "cost_ratio": ratio.estimate,
        "cost_ratio_ci_low": ratio.low,
        "cost_ratio_ci_high": ratio.high,
    }


def _verdict(row: dict[str, Any], provider: str, alpha: float) -> str:
    a, b = row["mode_a"], row["mode_b"]
    head = f"{b} vs {a} ({provider})"
    if row["n_pairs"] == 0:
        return f"{head}: no cells in common — nothing to compare"
    adjusted = not math.isnan(row["p_holm"])
    p = row["p_holm"] if adjusted else row["p_value"]
    p_fmt = fmt_p(p)
    p_text = ("Holm-adjusted p" if adjusted else "p") + (p_fmt if p_fmt[0] == "<" else f"={p_fmt}")
    significant = p < alpha and (not row["epochs_repeat"] or row["diff_excludes_zero"])
    if significant and row["diff"] != 0:
        tail = f"{b} passes {'more' if row['diff'] > 0 else 'less'} often than {a}"
    elif row["only_a"] + row["only_b"] == 0:
        tail = "no evidence of a difference (they agree on every cell)"
    else:
        tail = "no evidence of a difference"
    return f"{head}: {fmt_pts(row['diff'])}, {p_text} — {tail}"


def _cost_verdict(row: dict[str, Any]) -> str:
    a, b = row["mode_a"], row["mode_b"]
    if row["cost_pairs"] == 0:
        return "cost unknown for these cells"
    ci = (
        f"95% CI {fmt_usd(row['cost_diff_ci_low'], sign=True)} to "
        f"{fmt_usd(row['cost_diff_ci_high'], sign=True)}"
    )
    text = f"{b} - {a}: {fmt_usd(row['cost_diff'], sign=True)} per cell ({ci}"
    if not math.isnan(row["cost_ratio"]):
        text += f"; {fmt_ratio(row['cost_ratio'])} the cost"
    text += ")"
    if row["cost_diff_excludes_zero"]:
        return f"{text} — {b} costs {'more' if row['cost_diff'] > 0 else 'less'}"
    return f"{text} — no evidence of a cost difference"


def comparisons_frame(
    p: pd.DataFrame,
    *,
    modes: Sequence[str] | None = None,
    alpha: float = 0.05,
    n_resamples: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """:func:`paired_comparisons` on an already prepared frame."""
    order = list(modes) if modes is not None else sorted(p["mode"].unique())
    rows: list[dict[str, Any]] = []
    for provider, g in p.groupby("provider", sort=True):
        index = [*_PAIR_KEY, "mode"]
        wide_pass = g.set_index(index)["passed"].astype(float).unstack("mode")
        wide_cost = g.set_index(index)["cost_usd"].unstack("mode")
        present = [m for m in order if m in wide_pass.columns]
        for a, b in itertools.combinations(present, 2):
            row = _one_pair(wide_pass, wide_cost, a, b, n_resamples=n_resamples, seed=seed)
            rows.append({"provider": provider, **row})
    family = len(set(p["mode"]) & set(order)) > 2
    adjusted = holm_adjust([r["p_value"] for r in rows]) if family else [math.nan] * len(rows)
    for row, p_adj in zip(rows, adjusted, strict=True):
        row["p_holm"] = p_adj
        row["verdict"] = _verdict(row, row["provider"], alpha)
        row["cost_verdict"] = _cost_verdict(row)
    return pd.DataFrame(rows, columns=COMPARISON_COLUMNS)


def paired_comparisons(
    df: pd.DataFrame,
    *,
    modes: Sequence[str] | None = None,
    alpha: float = 0.05,
    n_resamples: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """Compare every pair of modes, per provider, on the cells both ran.

    ``modes`` fixes the order (and which modes to compare); a pair (A, B) reads "B vs A" and
    every difference is B − A. Default: all modes, alphabetical. One row per (provider, A, B)
    with the paired counts (``only_a`` = A passed and B failed), both pass rates on the shared
    cells, ``diff`` with a task-bootstrap 95% interval, the McNemar exact ``p_value``, ``p_holm``
    (NaN unless more than two modes are compared), the mean cost difference per cell over cells
    whose cost is known on both sides (``cost_pairs``) with its interval, the cost ratio
    sum(B)/sum(A) with its interval, and the two plain-words verdicts.
    """
    prepared, _ = prepare_results(df)
    return comparisons_frame(prepared, modes=modes, alpha=alpha, n_resamples=n_resamples, seed=seed)
