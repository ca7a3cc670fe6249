"""The sentences a report opens with, and the mode asymmetries stated beside a comparison.

:func:`headline` gives one sentence per real provider: the mode with the best pass rate and the
cheapest one, the difference to the runner-up with its interval, Holm-adjusted p and minimum
detectable difference. :func:`asymmetry_notes` says, for one comparison, which kernel settings
differ between its two modes in a way that changes outcomes, with the counts measured in the run.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from harness.report._compare import below_mdd_note, fmt_mdd
from harness.report._format import fmt_p, fmt_pct, fmt_pts, fmt_usd

__all__ = [
    "STRICT_PROGRESS_MODES",
    "asymmetry_notes",
    "headline",
    "pair_row",
    "provider_sentence",
    "sort_summary",
]

#: Modes whose no-progress check is strict (the same tool calls with the same results); the
#: others use the lax one (also no new text). A suite's ``progress_check`` can equalise them.
STRICT_PROGRESS_MODES = frozenset({"react", "orchestrate"})
#: Modes whose planning call counts as one of their ``max_iterations``.
PLAN_TURN_MODES = frozenset({"plan_and_solve"})


def sort_summary(summary: pd.DataFrame, scripted: frozenset[str]) -> pd.DataFrame:
    """Real-model rows first, then scripted ones; within each, by pass rate (highest first),
    then provider and mode."""
    if summary.empty:
        return summary
    key = summary.assign(
        _scripted=summary["provider"].astype(str).isin(scripted),
        _rate=-summary["pass_rate"].astype(float).fillna(-1.0),
    )
    key = key.sort_values(["_scripted", "_rate", "provider", "mode"], kind="stable")
    return key.drop(columns=["_scripted", "_rate"]).reset_index(drop=True)


def pair_row(comparisons: pd.DataFrame, provider: str, x: str, y: str) -> tuple[Any, float] | None:
    """The comparison row of modes ``x`` and ``y`` on ``provider`` and the sign that turns its
    differences into ``x - y``."""
    c = comparisons
    hit = c[(c["provider"] == provider) & (c["mode_a"] == y) & (c["mode_b"] == x)]
    if len(hit):
        return hit.iloc[0], 1.0
    hit = c[(c["provider"] == provider) & (c["mode_a"] == x) & (c["mode_b"] == y)]
    return (hit.iloc[0], -1.0) if len(hit) else None


def _p_text(p: float) -> str:
    f = fmt_p(p)
    return "Holm-adjusted p" + (f if f.startswith("<") else f"={f}")


def _signed_ci(low: float, high: float, sign: float, fmt: Any) -> str:
    if math.isnan(low) or math.isnan(high):
        return "no interval"
    lo, hi = sorted((sign * low, sign * high))
    return f"95% CI {fmt(lo)} to {fmt(hi)}"


def _pass_clause(rows: pd.DataFrame, comparisons: pd.DataFrame, provider: str, alpha: float) -> str:
    best, second = rows.iloc[0], rows.iloc[1]
    text = (
        f"{best['mode']} passes most often ({fmt_pct(best['pass_rate'], 1)} of "
        f"{best['tasks']} tasks)"
    )
    found = pair_row(comparisons, provider, str(best["mode"]), str(second["mode"]))
    if found is None:
        return text + f", ahead of {second['mode']} ({fmt_pct(second['pass_rate'], 1)})"
    r, s = found
    ci = _signed_ci(r["diff_ci_low"], r["diff_ci_high"], s, fmt_pts)
    text += f", {fmt_pts(s * r['diff'])} over {second['mode']} on the shared cells ({ci}, "
    if not r["can_reach"]:
        return text + f"but {r['tasks']} tasks cannot reach significance)"
    sure = "significant" if r["p_holm"] < alpha and r["diff"] != 0 else "no evidence"
    text += f"{_p_text(r['p_holm'])}: {sure}"
    if sure == "no evidence":
        text += f"; detectable at 80% power: {fmt_mdd(r['mdd'])} or more"
    elif below_mdd_note(r):
        text += f"; {below_mdd_note(r)}"
    return text + ")"


def _cost_clause(rows: pd.DataFrame, comparisons: pd.DataFrame, provider: str, alpha: float) -> str:
    known = rows.dropna(subset=["cost_mean"]).sort_values(["cost_mean", "mode"], kind="stable")
    if known.empty:
        return "cost unknown"
    cheap = known.iloc[0]
    text = f"{cheap['mode']} costs least ({fmt_usd(cheap['cost_mean'])} per cell)"
    if len(known) < 2:
        return text
    other = known.iloc[1]
    if other["cost_mean"] == cheap["cost_mean"]:
        same = fmt_usd(cheap["cost_mean"])
        return f"{cheap['mode']} and {other['mode']} cost the same ({same} per cell)"
    found = pair_row(comparisons, provider, str(cheap["mode"]), str(other["mode"]))
    if found is None:
        return text
    r, s = found
    ci = _signed_ci(r["cost_diff_ci_low"], r["cost_diff_ci_high"], s, lambda v: fmt_usd(v, True))
    sure = "significant" if r["p_cost_holm"] < alpha and r["cost_diff"] != 0 else "no evidence"
    return text + (
        f", {fmt_usd(s * r['cost_diff'], sign=True)} per cell against {other['mode']} "
        f"({ci}, {_p_text(r['p_cost_holm'])}: {sure})"
    )


def provider_sentence(
    provider: str, rows: pd.DataFrame, comparisons: pd.DataFrame, alpha: float
) -> str:
    """The full verdict sentence of one real provider; ``rows`` are its summary rows with
    scored cells (any order)."""
    rows = rows.sort_values(["pass_rate", "mode"], ascending=[False, True], kind="stable")
    if rows.empty:
        return f"{provider}: no scored cell."
    if len(rows) == 1:
        r = rows.iloc[0]
        return (
            f"{provider}: only {r['mode']} ran ({fmt_pct(r['pass_rate'], 1)} of "
            f"{r['tasks']} tasks, {fmt_usd(r['cost_mean'])} per cell); nothing to compare."
        )
    return (
        f"{provider}: {_pass_clause(rows, comparisons, provider, alpha)}; "
        f"{_cost_clause(rows, comparisons, provider, alpha)}."
    )


def headline(
    summary: pd.DataFrame, comparisons: pd.DataFrame, scripted: frozenset[str], alpha: float
) -> list[str]:
    """One sentence per real provider (scripted ones make no claim), providers sorted."""
    real = summary[~summary["provider"].astype(str).isin(scripted)]
    return [
        provider_sentence(str(provider), g[g["n"] > 0], comparisons, alpha)
        for provider, g in real.groupby("provider", sort=True)
    ]


def _count(finish: pd.DataFrame, mode: str, provider: str, reason: str) -> int:
    if reason not in finish.columns:
        return 0
    hit = finish[(finish["mode"] == mode) & (finish["provider"] == provider)]
    return int(hit[reason].sum()) if len(hit) else 0


def _cells(summary: pd.DataFrame, mode: str, provider: str) -> int:
    hit = summary[(summary["mode"] == mode) & (summary["provider"] == provider)]
    return int(hit["n"].sum()) if len(hit) else 0


def asymmetry_notes(row: Any, summary: pd.DataFrame, finish_reasons: pd.DataFrame) -> list[str]:
    """What differs between the comparison's two modes beyond the prompting (the progress
    check, the plan turn), with the finish-reason counts of the run that it affects."""
    a, b, provider = str(row["mode_a"]), str(row["mode_b"]), str(row["provider"])
    notes: list[str] = []

    def counts(reason: str) -> str:
        return ", ".join(
            f"{m} {_count(finish_reasons, m, provider, reason):,} of "
            f"{_cells(summary, m, provider):,} cells"
            for m in (a, b)
        )

    if (a in STRICT_PROGRESS_MODES) != (b in STRICT_PROGRESS_MODES):
        strict, lax = (a, b) if a in STRICT_PROGRESS_MODES else (b, a)
        notes.append(
            f"{strict} stops on the strict no-progress check, {lax} on the lax one (unless the "
            f"suite sets progress_check): error_no_progress {counts('error_no_progress')}"
        )
    if (a in PLAN_TURN_MODES) != (b in PLAN_TURN_MODES):
        planner = a if a in PLAN_TURN_MODES else b
        notes.append(
            f"{planner}'s planning call counts as one of its iterations: error_max_turns "
            f"{counts('error_max_turns')}"
        )
    return notes
