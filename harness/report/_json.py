"""The report as JSON (``harness report --format json``): the summary, every comparison and the
totals the gate looks at, validated by ``docs/report-schema.json``. Numbers that do not exist
(an interval of one task, an unknown cost, a difference no test can detect) are ``null``."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

import pandas as pd

from harness.report._bfcl import bfcl_document
from harness.report._humaneval import humaneval_document
from harness.report._models import model_document
from harness.report._tables import scored
from harness.report._verdicts import asymmetry_notes

if TYPE_CHECKING:
    from harness.report._build import Report
    from harness.report._headline import Verdict

__all__ = ["REPORT_FORMAT", "REPORT_VERSION", "render_json", "report_document"]

REPORT_FORMAT = "harness-report"
REPORT_VERSION = 1

_SUMMARY_FIELDS = (
    "n", "passed", "pass_rate", "pass_ci_low", "pass_ci_high", "tasks", "errors",
    "cost_known", "cost_unknown", "cost_mean", "cost_median", "cost_total",
    "input_tokens_mean", "output_tokens_mean", "iterations_mean", "llm_calls_mean",
    "tool_calls_mean",
)  # fmt: skip
_COMPARISON_FIELDS = (
    "tasks", "n_pairs", "a_passed", "b_passed", "only_a", "only_b", "rate_a", "rate_b",
    "diff", "diff_ci_low", "diff_ci_high", "p_value", "p_holm", "discordance", "size_b_better",
    "size_a_better", "mdd", "min_p",
    "can_reach", "cost_pairs", "cost_diff", "cost_diff_ci_low", "cost_diff_ci_high",
    "cost_ratio", "cost_ratio_ci_low", "cost_ratio_ci_high", "p_cost", "p_cost_holm",
    "verdict", "cost_verdict",
)  # fmt: skip


def _plain(value: Any) -> Any:
    """JSON-safe: numpy scalars to Python, NaN and None to None."""
    if value is None:
        return None
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _finish_mix(report: Report, mode: str, provider: str) -> dict[str, int]:
    f = report.finish_reasons
    hit = f[(f["mode"] == mode) & (f["provider"] == provider)]
    if hit.empty:
        return {}
    row = hit.iloc[0]
    return {str(c): int(row[c]) for c in f.columns if c not in ("mode", "provider") and row[c]}


def _summary(report: Report) -> list[dict[str, Any]]:
    out = []
    for _, r in report.summary.iterrows():
        mode, provider = str(r["mode"]), str(r["provider"])
        row: dict[str, Any] = {
            "mode": mode,
            "provider": provider,
            "scripted": provider in report.scripted,
        }
        row.update({k: _plain(r[k]) for k in _SUMMARY_FIELDS})
        row["finish_reasons"] = _finish_mix(report, mode, provider)
        out.append(row)
    return out


def _comparisons(report: Report) -> list[dict[str, Any]]:
    out = []
    for _, r in report.comparisons.iterrows():
        row: dict[str, Any] = {
            "provider": str(r["provider"]),
            "mode_a": str(r["mode_a"]),
            "mode_b": str(r["mode_b"]),
            "scripted": bool(r["scripted"]),
        }
        row.update({k: _plain(r[k]) for k in _COMPARISON_FIELDS})
        row["can_reach"] = bool(r["can_reach"])
        row["notes"] = asymmetry_notes(r, report.summary, report.finish_reasons)
        out.append(row)
    return out


def _totals_of(g: pd.DataFrame) -> dict[str, Any]:
    ok = scored(g)
    cost = ok["cost_usd"].dropna()
    return {
        "cells": len(g),
        "scored": len(ok),
        "errored": len(g) - len(ok),
        "passed": int(ok["passed"].sum()),
        "pass_rate": _plain(float(ok["passed"].mean())) if len(ok) else None,
        "cost_usd": _plain(float(cost.sum())) if len(cost) else None,
        "cost_unknown": len(ok) - len(cost),
    }


def _totals(report: Report) -> dict[str, Any]:
    """Per cell, as the gate counts (every scored cell once; not task-weighted)."""
    cells = report.cells
    if cells is None:
        return {"total": None, "suites": {}, "groups": []}
    groups = []
    for (provider, mode), g in cells.groupby(["provider", "mode"], sort=True):
        groups.append({"provider": str(provider), "mode": str(mode), **_totals_of(g)})
    return {
        "total": _totals_of(cells),
        "suites": {str(s): _totals_of(g) for s, g in cells.groupby("suite", sort=True)},
        "groups": groups,
    }


def _verdict(v: Verdict) -> dict[str, Any]:
    return {"provider": v.provider, "model": v.model, "headline": v.headline,
            "sentence": v.sentence}  # fmt: skip


def report_document(report: Report) -> dict[str, Any]:
    """The JSON document of ``report`` (docs/report-schema.json)."""
    return {
        "format": REPORT_FORMAT,
        "version": REPORT_VERSION,
        "title": report.title,
        "run_ids": list(report.run_ids),
        "generated_at": report.generated_at,
        "n_results": report.n_results,
        "alpha": report.alpha,
        "scripted_providers": sorted(report.scripted),
        "headline": list(report.headline),
        "verdicts": [_verdict(v) for v in report.verdicts],
        "summary": _summary(report),
        "comparisons": _comparisons(report),
        "totals": _totals(report),
        "baseline": None
        if report.diff_counts is None
        else {"label": report.baseline_label, "counts": dict(report.diff_counts)},
        "warnings": list(report.warnings),
        "bfcl": bfcl_document(report.bfcl),
        "humaneval": humaneval_document(report.humaneval),
        "models": model_document(report.models),
    }


def render_json(report: Report) -> str:
    """``report.json``: indented, no NaN (``null`` instead)."""
    return json.dumps(report_document(report), indent=1, allow_nan=False, ensure_ascii=False) + "\n"
