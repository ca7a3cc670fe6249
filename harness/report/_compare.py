"""Paired comparisons of modes on the same tasks, with a plain-words verdict for each.

The task is the statistical unit: epochs are repeated measures of a task, so each task counts
once, with its pass rate (and mean cost) over its epochs. Two modes are compared on the tasks
they share (same suite, task and provider), on the cells both ran (same epoch). The pass-rate
difference is tested with an exact sign test over tasks (McNemar's exact test when there is one
epoch), the cost difference with a Wilcoxon signed-rank test over tasks. Every claim in the
report, pass rate and cost, every pair and every provider, is one family: the p-values are
Holm-adjusted together, so that on data with no real difference at most ``alpha`` of reports
claim any difference. A difference is claimed only when its adjusted p-value is below ``alpha``;
everything else reads "no evidence of a difference", with the smallest difference the test could
have detected at 80% power, in pass-rate points like the difference it is compared with
(:mod:`harness.report._power`), or says that no outcome could reach significance with that few
tasks. A significant difference smaller than that says why it could still be found. Bootstrap
intervals that resample whole tasks are shown beside the estimates. Error cells (status
``error``) are left out.

Scripted providers (the mock provider: its outcomes are written by the suite's author) are checks
of the suites, not findings about modes: their comparisons stay out of the Holm family, get no
p-value and no significance language.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Collection, Sequence
from typing import Any

import pandas as pd

from harness.report._format import fmt_p, fmt_pts, fmt_ratio, fmt_usd
from harness.report._power import detectable_pass_rate_difference, min_sign_test_p
from harness.report._providers import scripted_providers
from harness.report._stats import cluster_bootstrap, holm_adjust, sign_test, signed_rank_test
from harness.report._tables import prepare_results, scored

__all__ = [
    "COMPARISON_COLUMNS",
    "below_mdd_note",
    "comparisons_frame",
    "fmt_mdd",
    "mdd_phrase",
    "paired_comparisons",
]

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
    "tasks_b_better",
    "tasks_a_better",
    "cost_pairs",
    "cost_diff",
    "cost_diff_ci_low",
    "cost_diff_ci_high",
    "cost_ratio",
    "cost_ratio_ci_low",
    "cost_ratio_ci_high",
    "p_cost",
    "p_cost_holm",
    "scripted",
    "discordance",
    "size_b_better",
    "size_a_better",
    "mdd",
    "min_p",
    "can_reach",
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
    # Task level: each task's pass-rate difference over its shared epochs.
    task_diff = pd.Series(pb.astype(float) - pa.astype(float)).groupby(clusters).mean().to_numpy()
    costs = wide_cost.reindex(both.index)[[a, b]].dropna()
    cost_keys = costs.index.to_frame(index=False)[["suite", "task_id"]]
    cost_clusters = cost_keys.groupby(["suite", "task_id"], sort=False).ngroup().to_numpy()
    ca, cb = costs[a].to_numpy(dtype=float), costs[b].to_numpy(dtype=float)
    cost_diff = cluster_bootstrap(cb - ca, cost_clusters, n_resamples=n_resamples, seed=seed)
    ratio = cluster_bootstrap(cb, cost_clusters, denominator=ca, n_resamples=n_resamples, seed=seed)
    task_cost_diff = pd.Series(cb - ca).groupby(cost_clusters).mean().to_numpy()
    n = len(both)
    only_a = int((pa & ~pb).sum())
    only_b = int((pb & ~pa).sum())
    n_tasks = int(clusters.max()) + 1 if n else 0
    untied = task_diff[task_diff != 0]
    discordance = len(untied) / n_tasks if n_tasks else math.nan
    # The mean size of the differences of the tasks going each way: 1 with one epoch, 0.5 for a
    # task split 1-0 over 2 epochs. They turn the sign test's MDD into pass-rate points (_power).
    b_better, a_better = task_diff[task_diff > 0], -task_diff[task_diff < 0]
    size_b = float(b_better.mean()) if len(b_better) else math.nan
    size_a = float(a_better.mean()) if len(a_better) else math.nan
    lead, trail = (size_b, size_a) if len(b_better) >= len(a_better) else (size_a, size_b)
    lead = lead if not math.isnan(lead) else (trail if not math.isnan(trail) else 1.0)
    trail = trail if not math.isnan(trail) else lead
    return {
        "mode_a": a,
        "mode_b": b,
        "n_pairs": n,
        "tasks": n_tasks,
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
        "p_value": sign_test(task_diff) if n else math.nan,
        "tasks_b_better": int((task_diff > 0).sum()),
        "tasks_a_better": int((task_diff < 0).sum()),
        "cost_pairs": len(costs),
        "cost_diff": cost_diff.estimate,
        "cost_diff_ci_low": cost_diff.low,
        "cost_diff_ci_high": cost_diff.high,
        "cost_ratio": ratio.estimate,
        "cost_ratio_ci_low": ratio.low,
        "cost_ratio_ci_high": ratio.high,
        "p_cost": signed_rank_test(task_cost_diff) if len(costs) else math.nan,
        "discordance": discordance,
        "size_b_better": size_b,
        "size_a_better": size_a,
        "mdd": detectable_pass_rate_difference(n_tasks, discordance, lead, trail)
        if n_tasks
        else math.nan,
        "min_p": min_sign_test_p(n_tasks),
        # A test with no untied task cannot reject anything: it stays out of the Holm family.
        "_pass_testable": bool(n and (task_diff != 0).any()),
        "_cost_testable": bool(len(costs) and (task_cost_diff != 0).any()),
    }


def _verdict(row: dict[str, Any], provider: str, alpha: float) -> str:
    a, b = row["mode_a"], row["mode_b"]
    if row["scripted"]:
        return _scripted_verdict(row, provider)
    head = f"{b} vs {a} ({provider})"
    if row["n_pairs"] == 0:
        return f"{head}: no cells in common — nothing to compare"
    tasks = row["tasks"]
    if not row["can_reach"]:
        return (
            f"{head}: {fmt_pts(row['diff'])} over {tasks} task{'s' if tasks != 1 else ''} — "
            f"cannot reach significance with {tasks} task{'s' if tasks != 1 else ''} (the "
            f"smallest possible p is {row['min_p']:.3g}): no verdict either way"
        )
    p_fmt = fmt_p(row["p_holm"])
    p_text = "Holm-adjusted p" + (p_fmt if p_fmt[0] == "<" else f"={p_fmt}")
    if row["p_holm"] < alpha and row["diff"] != 0:
        tail = f"{b} passes {'more' if row['diff'] > 0 else 'less'} often than {a}"
        below = below_mdd_note(row)
        if below:
            tail += f" ({below})"
    elif row["only_a"] + row["only_b"] == 0:
        tail = "no evidence of a difference (they agree on every cell)"
    else:
        tail = "no evidence of a difference"
    if not row["p_holm"] < alpha:
        tail += f"; {mdd_phrase(row)}"
    return f"{head}: {fmt_pts(row['diff'])} over {tasks} tasks, {p_text} — {tail}"


def mdd_phrase(row: dict[str, Any] | pd.Series) -> str:
    """'differences under N pts are likely to go unseen here (80% power needs N pts)'."""
    mdd = row["mdd"]
    if isinstance(mdd, float) and math.isnan(mdd):
        return f"no difference reaches 80% power over {row['tasks']} tasks"
    return f"detectable at 80% power over {row['tasks']} tasks: {fmt_mdd(mdd)} or more"


def below_mdd_note(row: dict[str, Any] | pd.Series) -> str:
    """Why a significant difference can be smaller than the detectable one ('' when it is not
    smaller): the MDD is the size found 80% of the time; smaller ones are found less often."""
    mdd, diff = row["mdd"], row["diff"]
    if math.isnan(float(mdd)) or abs(diff) >= mdd:
        return ""
    return (
        f"smaller than the {fmt_mdd(mdd)} detectable at 80% power: a difference of this size "
        "is found less than 80% of the time, and this one was"
    )


def fmt_mdd(mdd: float) -> str:
    """A minimum detectable difference in whole points, rounded up: 0.194 -> '20 pts'."""
    return "–" if math.isnan(mdd) else f"{math.ceil(round(mdd * 100, 6)):.0f} pts"


def _scripted_verdict(row: dict[str, Any], provider: str) -> str:
    a, b = row["mode_a"], row["mode_b"]
    head = f"{b} vs {a} ({provider}, scripted)"
    if row["n_pairs"] == 0:
        return f"{head}: no cells in common — nothing to check"
    return (
        f"{head}: suite check, not a finding about the modes — {b} passed "
        f"{row['b_passed']} and {a} {row['a_passed']} of {row['n_pairs']} shared cells "
        f"({row['tasks']} tasks); they differ on {row['only_a'] + row['only_b']} cell(s)"
    )


def _cost_verdict(row: dict[str, Any], alpha: float) -> str:
    a, b = row["mode_a"], row["mode_b"]
    if row["cost_pairs"] == 0:
        return "cost unknown for these cells"
    if row["scripted"]:
        return (
            f"{b} - {a}: {fmt_usd(row['cost_diff'], sign=True)} per cell "
            "(scripted replies: no claim)"
        )
    ci = (
        f"95% CI {fmt_usd(row['cost_diff_ci_low'], sign=True)} to "
        f"{fmt_usd(row['cost_diff_ci_high'], sign=True)}"
    )
    text = f"{b} - {a}: {fmt_usd(row['cost_diff'], sign=True)} per cell ({ci}"
    if not math.isnan(row["cost_ratio"]):
        text += f"; {fmt_ratio(row['cost_ratio'])} the cost"
    p_fmt = fmt_p(row["p_cost_holm"])
    text += "; Holm-adjusted p" + (p_fmt if p_fmt[0] == "<" else f"={p_fmt}") + ")"
    if row["p_cost_holm"] < alpha and row["cost_diff"] != 0:
        return f"{text} — {b} costs {'more' if row['cost_diff'] > 0 else 'less'}"
    return f"{text} — no evidence of a cost difference"


def comparisons_frame(
    p: pd.DataFrame,
    *,
    modes: Sequence[str] | None = None,
    alpha: float = 0.05,
    n_resamples: int = 2000,
    seed: int = 0,
    scripted: Collection[str] | None = None,
) -> pd.DataFrame:
    """:func:`paired_comparisons` on an already prepared frame. ``scripted``: the providers
    whose comparisons are suite checks (default: those whose profile is the mock provider)."""
    if scripted is None:
        scripted = scripted_providers(str(v) for v in p["provider"].unique())
    order = list(modes) if modes is not None else sorted(p["mode"].unique())
    rows: list[dict[str, Any]] = []
    for provider, g in scored(p).groupby("provider", sort=True):
        index = [*_PAIR_KEY, "mode"]
        wide_pass = g.set_index(index)["passed"].astype(float).unstack("mode")
        wide_cost = g.set_index(index)["cost_usd"].unstack("mode")
        present = [m for m in order if m in wide_pass.columns]
        for a, b in itertools.combinations(present, 2):
            row = _one_pair(wide_pass, wide_cost, a, b, n_resamples=n_resamples, seed=seed)
            row["scripted"] = str(provider) in scripted
            row["can_reach"] = bool(row["min_p"] < alpha)
            rows.append({"provider": provider, **row})
    # One family for every claim of the report: pass rate and cost, all pairs, all real
    # providers. Scripted providers make no claim: they stay out of it.
    family = [
        r["p_value"] if r.pop("_pass_testable") and not r["scripted"] else math.nan for r in rows
    ] + [r["p_cost"] if r.pop("_cost_testable") and not r["scripted"] else math.nan for r in rows]
    adjusted = _holm_nan(family)
    for i, row in enumerate(rows):  # untestable: nothing to claim, adjusted p = raw p
        if math.isnan(adjusted[i]):
            adjusted[i] = row["p_value"]
        if math.isnan(adjusted[len(rows) + i]):
            adjusted[len(rows) + i] = row["p_cost"]
    for i, row in enumerate(rows):
        if row["scripted"]:  # no claim: no test is reported
            row["p_value"] = row["p_cost"] = adjusted[i] = adjusted[len(rows) + i] = math.nan
        row["p_holm"] = adjusted[i]
        row["p_cost_holm"] = adjusted[len(rows) + i]
        row["verdict"] = _verdict(row, row["provider"], alpha)
        row["cost_verdict"] = _cost_verdict(row, alpha)
    return pd.DataFrame(rows, columns=COMPARISON_COLUMNS)


def _holm_nan(pvalues: list[float]) -> list[float]:
    """Holm-adjusted p-values over the non-NaN entries (NaN stays NaN: no test was made)."""
    known = [i for i, v in enumerate(pvalues) if not math.isnan(v)]
    out = [math.nan] * len(pvalues)
    for i, v in zip(known, holm_adjust([pvalues[i] for i in known]), strict=True):
        out[i] = v
    return out


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
    cells, ``diff`` with a task-bootstrap 95% interval, ``p_value`` (exact sign test over the
    tasks' pass-rate differences; McNemar's exact test with one epoch) and ``p_holm``, the mean
    cost difference per cell over cells whose cost is known on both sides (``cost_pairs``) with
    its interval, the cost ratio sum(B)/sum(A) with its interval, ``p_cost`` (Wilcoxon
    signed-rank over the tasks' mean cost differences) and ``p_cost_holm``, and the two
    plain-words verdicts. All p-values of the frame (pass and cost, every pair and real
    provider) are Holm-adjusted together. ``discordance`` is the share of tasks on which the
    modes differ, ``size_b_better``/``size_a_better`` the mean absolute pass-rate difference of
    the tasks going B's/A's way (1 with one epoch; NaN: no such task), ``mdd`` the smallest
    pass-rate difference, in the points ``diff`` is in, that the sign test detects at 80% power
    with that many tasks, that discordance and those sizes (NaN: none does), ``min_p`` the
    smallest p-value the task count allows and ``can_reach`` whether it is below ``alpha``.
    Scripted providers (``scripted``: the mock provider) get no p-values and a suite-check
    verdict. Rows with ``status == "error"`` are left out.
    """
    prepared, _ = prepare_results(df)
    return comparisons_frame(prepared, modes=modes, alpha=alpha, n_resamples=n_resamples, seed=seed)
