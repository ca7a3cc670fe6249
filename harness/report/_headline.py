"""The verdict a person reads in ten seconds: one short headline per real provider, from the
same statistics as the full sentence it stands above (:func:`harness.report._verdicts.headline`).

A headline names the model, the mode that passes most often with its pass rate, how far the
runner-up is from it and whether that difference is significant (Holm-adjusted, as every claim
of the report), and the mode that costs least and whether that is significant::

    On qwen2.5-coder-0.5b-instruct (llamaserver-qwen-chat): react passes most often, 49% of
    286 tasks; reflexion is 11 points lower (significant); reflexion costs least (significant).

Nothing in it is written by hand: a difference with no evidence reads "not significant", one
with too few tasks for any outcome to be significant "too few tasks to tell", and a tie "no
detectable difference".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from harness.report._format import fmt_pct, isnan
from harness.report._verdicts import pair_row, provider_sentence

__all__ = ["Verdict", "short_headline", "verdicts"]


@dataclass(frozen=True, slots=True)
class Verdict:
    """One real provider's verdict: the short headline and the full sentence beneath it."""

    provider: str
    #: The model the provider served (None when its cells name none or several).
    model: str | None
    headline: str
    sentence: str


def _significance(row: Any, p_column: str, diff_column: str, alpha: float) -> str:
    if p_column == "p_holm" and not row["can_reach"]:
        return "too few tasks to tell"
    p = row[p_column]
    if not isnan(p) and p < alpha and row[diff_column] != 0:
        return "significant"
    return "not significant"


def _points(diff: float) -> str:
    """A difference in whole points for the headline: 0.107 -> '11 points', 0.004 -> 'under
    1 point'."""
    pts = round(abs(diff) * 100)
    if pts == 0:
        return "under 1 point"
    return f"{pts} point{'s' if pts != 1 else ''}"


def _runner_up(
    best: Any, second: Any, comparisons: pd.DataFrame, provider: str, alpha: float
) -> str:
    found = pair_row(comparisons, provider, str(best["mode"]), str(second["mode"]))
    name = str(second["mode"])
    if found is None or found[0]["n_pairs"] == 0 or isnan(found[0]["diff"]):
        return f"{name} next, {fmt_pct(second['pass_rate'])} (no task in common to compare)"
    row, sign = found
    gap = -sign * float(row["diff"])  # runner-up minus best, on the cells both ran
    if gap == 0:
        return f"{name}: no detectable difference on the tasks both ran"
    way = "lower" if gap < 0 else "higher"
    where = "" if gap < 0 else " on the tasks both ran"
    return f"{name} is {_points(gap)} {way}{where} ({_significance(row, 'p_holm', 'diff', alpha)})"


def _cheapest(rows: pd.DataFrame, comparisons: pd.DataFrame, provider: str, alpha: float) -> str:
    known = rows.dropna(subset=["cost_mean"]).sort_values(["cost_mean", "mode"], kind="stable")
    if known.empty:
        return "cost unknown"
    cheap = known.iloc[0]
    if len(known) < 2:
        return f"{cheap['mode']} costs least"
    if (known["cost_mean"] == cheap["cost_mean"]).all():
        return "every mode costs the same"
    other = known.iloc[1]
    if other["cost_mean"] == cheap["cost_mean"]:
        return f"{cheap['mode']} and {other['mode']} cost least (the same)"
    found = pair_row(comparisons, provider, str(cheap["mode"]), str(other["mode"]))
    if found is None:
        return f"{cheap['mode']} costs least"
    row, _ = found
    if row["cost_pairs"] == 0:
        return f"{cheap['mode']} costs least (no cell in common to compare)"
    return f"{cheap['mode']} costs least ({_significance(row, 'p_cost_holm', 'cost_diff', alpha)})"


def short_headline(
    provider: str,
    model: str | None,
    rows: pd.DataFrame,
    comparisons: pd.DataFrame,
    alpha: float,
) -> str:
    """The headline of one real provider; ``rows`` are its summary rows with scored cells."""
    who = f"On {model} ({provider})" if model else f"On {provider}"
    if rows.empty:
        return f"{who}: no scored cell."
    rows = rows.sort_values(["pass_rate", "mode"], ascending=[False, True], kind="stable")
    best = rows.iloc[0]
    rate = f"{fmt_pct(best['pass_rate'])} of {int(best['tasks']):,} tasks"
    if len(rows) == 1:
        return f"{who}: only {best['mode']} ran, {rate}."
    second = rows.iloc[1]
    lead = (
        f"{best['mode']} and {second['mode']} pass equally often, {rate}"
        if best["pass_rate"] == second["pass_rate"]
        else f"{best['mode']} passes most often, {rate}"
    )
    return (
        f"{who}: {lead}; {_runner_up(best, second, comparisons, provider, alpha)}; "
        f"{_cheapest(rows, comparisons, provider, alpha)}."
    )


def _model_of(cells: pd.DataFrame | None, provider: str) -> str | None:
    if cells is None or "model" not in cells.columns:
        return None
    models = {str(m) for m in cells.loc[cells["provider"] == provider, "model"].dropna()}
    return models.pop() if len(models) == 1 else None


def verdicts(
    summary: pd.DataFrame,
    comparisons: pd.DataFrame,
    scripted: frozenset[str],
    alpha: float,
    cells: pd.DataFrame | None = None,
) -> list[Verdict]:
    """One :class:`Verdict` per real provider (scripted ones make no claim), providers sorted;
    ``cells`` (the prepared results) name each provider's model."""
    out: list[Verdict] = []
    real = summary[~summary["provider"].astype(str).isin(scripted)]
    for provider, g in real.groupby("provider", sort=True):
        pv = str(provider)
        rows = g[g["n"] > 0]
        model = _model_of(cells, pv)
        out.append(
            Verdict(
                provider=pv,
                model=model,
                headline=short_headline(pv, model, rows, comparisons, alpha),
                sentence=provider_sentence(pv, rows, comparisons, alpha),
            )
        )
    return out
