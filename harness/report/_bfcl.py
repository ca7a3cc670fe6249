"""The report's BFCL section: accuracy per BFCL category and per BFCL group for each provider x
mode, with 95% Wilson intervals over entries, and the paired mode comparisons on BFCL's cells
alone. Shown only when a run has BFCL cells.

A cell is a BFCL cell when its suite is a BFCL suite (``bfcl``, the committed subset, or
``bfcl-...``, a ``bfcl:CATEGORY`` source path) and its task id is a BFCL id of a known category
(the id's prefix, :func:`~harness.suites._bfcl_data.category_of`). Like the summary, an entry
counts once (its pass rate over its epochs) and errored cells are left out.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from harness.report._compare import below_mdd_note, comparisons_frame, fmt_mdd
from harness.report._format import fmt_count, fmt_pct, isnan, paired_cells, plain
from harness.report._section_types import Section, Table
from harness.report._stats import wilson_interval_tasks
from harness.report._tables import GROUP, scored, task_means
from harness.suites._bfcl_data import (
    CATEGORIES,
    MULTI_TURN_CATEGORIES,
    SHOTS_PER_CATEGORY,
    category_of,
)

__all__ = ["GROUPS", "BfclTables", "bfcl_cells", "bfcl_document", "bfcl_section", "bfcl_tables"]

#: BFCL's groups, in display order: the AST categories split by live-ness, the (ir)relevance
#: categories (BFCL scores them apart, as hallucination checks), and the conversations.
GROUPS: dict[str, tuple[str, ...]] = {
    "non-live AST": ("simple_python", "multiple", "parallel", "parallel_multiple"),
    "live AST": ("live_simple", "live_multiple", "live_parallel", "live_parallel_multiple"),
    "relevance": ("irrelevance", "live_irrelevance", "live_relevance"),
    "multi-turn": MULTI_TURN_CATEGORIES,
}

FEW_SHOT_NOTE = (
    f"Every AST entry ran with {SHOTS_PER_CATEGORY} worked examples ({SHOTS_PER_CATEGORY}-shot "
    "per category, from entries of its own category that are excluded from scoring, as are "
    "entries that repeat a shot's question or answer); the "
    "(ir)relevance and multi-turn entries ran zero-shot. BFCL's leaderboard is zero-shot: these "
    "are not leaderboard numbers."
)


def _is_bfcl_suite(suite: str) -> bool:
    return suite == "bfcl" or suite.startswith("bfcl-")


def bfcl_cells(p: pd.DataFrame) -> pd.DataFrame:
    """The BFCL cells of prepared results ``p``, with a ``bfcl_category`` column."""
    if p.empty:
        return p.assign(bfcl_category=pd.Series(dtype=object))
    category = p["task_id"].map(category_of)
    mask = p["suite"].map(_is_bfcl_suite) & category.isin(CATEGORIES)
    return p.loc[mask].assign(bfcl_category=category[mask])


@dataclass
class BfclTables:
    """``accuracy``: one row per (row kind, name, mode, provider) with entries, passed cells,
    accuracy and its interval; ``comparisons``: :func:`comparisons_frame` on BFCL cells."""

    accuracy: pd.DataFrame
    comparisons: pd.DataFrame
    columns: list[tuple[str, str]]  # (provider, mode), in display order


_ACCURACY_COLUMNS = [
    "kind", "name", "provider", "mode", "entries", "cells", "passed", "accuracy",
    "ci_low", "ci_high",
]  # fmt: skip


def _rate(g: pd.DataFrame) -> dict[str, Any]:
    per_entry = task_means(g, "passed")
    low, high = wilson_interval_tasks(float(per_entry.sum()), len(per_entry))
    return {
        "entries": len(per_entry),
        "cells": len(g),
        "passed": int(g["passed"].sum()),
        "accuracy": float(per_entry.mean()) if len(per_entry) else float("nan"),
        "ci_low": low,
        "ci_high": high,
    }


def bfcl_tables(
    p: pd.DataFrame,
    *,
    modes: Sequence[str] | None = None,
    alpha: float = 0.05,
    n_resamples: int = 2000,
    seed: int = 0,
    scripted: Collection[str] = (),
) -> BfclTables | None:
    """The BFCL tables of prepared results ``p``; None when it has no BFCL cell."""
    cells = bfcl_cells(p)
    if cells.empty:
        return None
    ok = scored(cells)
    rows: list[dict[str, Any]] = []
    present = set(ok["bfcl_category"])
    for (mode, provider), g in ok.groupby(GROUP, sort=True):
        for group, categories in GROUPS.items():  # each group, then its categories
            if not present & set(categories):
                continue
            hit = g[g["bfcl_category"].isin(categories)]
            rows.append({"kind": "group", "name": group, "provider": provider, "mode": mode,
                         **_rate(hit)})  # fmt: skip
            for category in (c for c in categories if c in present):
                hit = g[g["bfcl_category"] == category]
                rows.append({"kind": "category", "name": category, "provider": provider,
                             "mode": mode, **_rate(hit)})  # fmt: skip
    order = list(modes) if modes is not None else sorted(set(ok["mode"]))
    columns = [
        (str(provider), str(mode))
        for provider in sorted(set(ok["provider"]), key=lambda v: (v in scripted, str(v)))
        for mode in order
        if ((ok["provider"] == provider) & (ok["mode"] == mode)).any()
    ]
    comparisons = comparisons_frame(
        cells.drop(columns="bfcl_category"),
        modes=modes,
        alpha=alpha,
        n_resamples=n_resamples,
        seed=seed,
        scripted=scripted,
    )
    return BfclTables(pd.DataFrame(rows, columns=_ACCURACY_COLUMNS), comparisons, columns)


def _cell(row: pd.Series | None) -> str:
    """Accuracy, the entries it is over and its interval: '50.0% of 6 (19–81%)'."""
    if row is None or isnan(row["accuracy"]):
        return "–"
    low, high = row["ci_low"], row["ci_high"]
    interval = "" if isnan(low) else f" ({low * 100:.0f}–{high * 100:.0f}%)"
    return f"{fmt_pct(row['accuracy'], 1)} of {fmt_count(row['entries'])}{interval}"


def bfcl_section(tables: BfclTables, scripted: Collection[str] = ()) -> list[Section]:
    """The BFCL accuracy table, then the paired mode comparisons on BFCL cells."""
    acc = tables.accuracy
    index: dict[tuple[str, str, str, str], pd.Series] = {
        (str(r["kind"]), str(r["name"]), str(r["provider"]), str(r["mode"])): r
        for _, r in acc.iterrows()
    }
    names = acc[["kind", "name"]].drop_duplicates()
    headers = ["group / category"]
    headers += [f"{m} · {p}{' (scripted)' if p in scripted else ''}" for p, m in tables.columns]
    rows = []
    for kind, name in names.itertuples(index=False):
        kind, name = str(kind), str(name)
        label = name if kind == "group" else f"· {name}"
        rows.append([label] + [_cell(index.get((kind, name, p, m))) for p, m in tables.columns])
    intro = [
        "BFCL (`bfcl-eval`), graded by BFCL's own checkers: accuracy per BFCL group, each "
        "followed by its categories (·), for each mode × provider, with the number of entries it "
        "ran. An entry counts once (its pass rate over its epochs); the 95% Wilson interval is "
        "over entries. A group pools the "
        "entries of its categories (BFCL's leaderboard averages some categories unweighted); "
        "relevance holds the irrelevance categories (passed by making no call) and "
        "live_relevance, which BFCL scores apart from the AST groups."
    ]
    out = [
        Section(
            "bfcl",
            "BFCL accuracy by group and category",
            intro=intro,
            table=Table(headers, rows, "l" + "r" * len(tables.columns)),
            outro=[FEW_SHOT_NOTE],
        )
    ]
    comparison = _comparison_section(tables.comparisons)
    if comparison is not None:
        out.append(comparison)
    return out


def _comparison_section(c: pd.DataFrame) -> Section | None:
    if c.empty:
        return None
    rows = [
        [
            f"{r['mode_b']} vs {r['mode_a']}",
            str(r["provider"]) + (" (scripted)" if r["scripted"] else ""),
            fmt_count(r["tasks"]),
            *paired_cells(r),
            _detectable(r),
        ]
        for _, r in c.iterrows()
    ]
    headers = ["comparison", "provider", "entries", "accuracy", "Δ", "95% CI", "p (Holm)",
               "detectable Δ (80% power)"]  # fmt: skip
    return Section(
        "bfcl-comparisons",
        "BFCL: paired mode comparisons",
        intro=[
            "The report's paired comparisons on the BFCL cells alone: the same entries and "
            "epochs under both modes; the interval resamples entries; p is McNemar's exact "
            "test (sign test over entries), Holm-corrected within this table. 'Detectable Δ' "
            "is the smallest accuracy difference that test finds with 80% power over that many "
            "entries, in the points of Δ (as in the mode comparisons; docs/report.md); 'none' "
            "when no outcome could be significant. Scripted providers make no claim."
        ],
        table=Table(headers, rows, "llrrrrrr"),
    )


def _detectable(r: pd.Series) -> str:
    if not r["can_reach"]:
        return f"none (p ≥ {r['min_p']:.3g})"
    text = fmt_mdd(r["mdd"])
    if not r["scripted"] and r["p_holm"] < 0.05 and below_mdd_note(r):
        text += " (Δ found below it)"
    return text


def bfcl_document(tables: BfclTables | None) -> dict[str, Any] | None:
    """The JSON report's ``bfcl`` member (None without BFCL cells)."""
    if tables is None:
        return None
    records = tables.accuracy.to_dict("records")
    accuracy = [{str(k): plain(v) for k, v in row.items()} for row in records]
    fields = ("provider", "mode_a", "mode_b", "scripted", "tasks", "rate_a", "rate_b", "diff",
              "diff_ci_low", "diff_ci_high", "p_value", "p_holm", "discordance", "size_b_better",
              "size_a_better", "mdd", "min_p", "can_reach")  # fmt: skip
    comparisons = [
        {k: plain(row[k]) for k in fields} for row in tables.comparisons.to_dict("records")
    ]
    return {
        "groups": {name: list(categories) for name, categories in GROUPS.items()},
        "accuracy": accuracy,
        "comparisons": comparisons,
        "note": FEW_SHOT_NOTE,
    }
