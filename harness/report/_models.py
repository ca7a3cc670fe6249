"""The report's model comparison: real providers against each other on the same tasks, the same
mode and the same epochs, for every mode they share.

A provider is one model on one server and one wire format, so a pair of providers compares
models (Qwen against Gemma on llama-server's Anthropic endpoint), wire formats (one model on
both endpoints of one server) or both. The statistics are the mode comparisons' with the roles
of mode and provider swapped (:func:`~harness.report._compare.comparisons_frame`): paired over
tasks, McNemar's exact test (sign test over tasks), a task-bootstrap interval, the smallest
difference detectable at 80% power; Holm-corrected within this table. Scripted providers (the
mock) are left out: their outcomes are written by the suites' authors.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import pandas as pd

from harness.report._compare import comparisons_frame, fmt_mdd
from harness.report._format import fmt_count, isnan, paired_cells, plain
from harness.report._section_types import Section, Table

__all__ = ["model_comparisons", "model_document", "model_section"]

_RENAME = {"provider": "mode", "mode_a": "provider_a", "mode_b": "provider_b"}


def model_comparisons(
    p: pd.DataFrame,
    *,
    alpha: float = 0.05,
    n_resamples: int = 2000,
    seed: int = 0,
    scripted: Collection[str] = (),
) -> pd.DataFrame:
    """One row per (mode, provider A, provider B) over the real providers of prepared results
    ``p`` (A before B alphabetically; differences are B - A). Empty with fewer than two."""
    real = p[~p["provider"].isin(list(scripted))] if not p.empty else p
    providers = sorted({str(v) for v in real["provider"]}) if not real.empty else []
    if len(providers) < 2:
        return pd.DataFrame()
    swapped = real.rename(columns={"provider": "mode", "mode": "provider"})
    frame = comparisons_frame(
        swapped, modes=providers, alpha=alpha, n_resamples=n_resamples, seed=seed, scripted=()
    )
    frame = frame.rename(columns=_RENAME)
    return frame[frame["tasks"] > 0].reset_index(drop=True)


def _verdict(r: pd.Series, alpha: float) -> str:
    if isnan(r["p_holm"]):
        return "not testable"
    if r["p_holm"] < alpha:
        direction = "more" if r["diff"] > 0 else "less"
        return f"{r['provider_b']} passes {direction} often (significant)"
    if not r["can_reach"]:
        return "too few tasks for any outcome to reach significance"
    return "no evidence of a difference"


def model_section(frame: pd.DataFrame, alpha: float = 0.05) -> Section | None:
    """The table of model (provider) comparisons; None when there is nothing to compare."""
    if frame.empty:
        return None
    rows = [
        [
            f"{r['provider_b']} vs {r['provider_a']}",
            str(r["mode"]),
            fmt_count(r["tasks"]),
            *paired_cells(r),
            fmt_mdd(r["mdd"]),
            _verdict(r, alpha),
        ]
        for _, r in frame.iterrows()
    ]
    headers = ["comparison", "mode", "tasks", "pass rate", "Δ", "95% CI", "p (Holm)",
               "detectable Δ", "verdict"]  # fmt: skip
    return Section(
        "models",
        "Models and servers compared (same tasks, same mode)",
        intro=[
            "Each real provider is one model on one server and one wire format. Two providers "
            "are compared on the cells both ran: the same suite, task, mode and epoch (a greedy "
            "model recorded one epoch, so a sampled one is compared on its first). The interval "
            "resamples tasks; p is McNemar's exact test, Holm-corrected within this table; "
            "detectable Δ is the smallest difference the test detects at 80% power with this "
            "many tasks."
        ],
        table=Table(headers, rows, "llrrrrrrl"),
    )


def model_document(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The JSON report's ``models`` member: one object per comparison."""
    fields = ("mode", "provider_a", "provider_b", "tasks", "rate_a", "rate_b", "diff",
              "diff_ci_low", "diff_ci_high", "p_value", "p_holm", "mdd")  # fmt: skip
    if frame.empty:
        return []
    return [{k: plain(row[k]) for k in fields} for row in frame.to_dict("records")]
