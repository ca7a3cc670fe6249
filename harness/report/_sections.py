"""The report's content as format-neutral sections, rendered to Markdown or HTML by render.py."""

from __future__ import annotations

from typing import Any

import pandas as pd

from harness.report._bfcl import bfcl_section
from harness.report._build import Report
from harness.report._compare_sections import comparison_sections, verdict_section
from harness.report._format import (
    cell_name,
    fmt_count,
    fmt_num,
    fmt_pct,
    fmt_usd,
    isnan,
)
from harness.report._humaneval import humaneval_section
from harness.report._models import model_section
from harness.report._section_types import Section, Table

__all__ = ["Section", "Table", "report_sections"]

MAX_DIFF_ROWS = 50
#: Rows of the task grid and of the failing-cells list (the viewer shows them all).
MAX_TASK_ROWS = 200


def _ci(low: Any, high: Any, fmt: Any) -> str:
    return "–" if isnan(low) or isnan(high) else f"{fmt(low)} to {fmt(high)}"


def _pct_ci(low: Any, high: Any) -> str:
    return "–" if isnan(low) or isnan(high) else f"{low * 100:.1f}–{high * 100:.1f}%"


def _top_reasons(mix: str, keep: int = 3) -> str:
    """The three most common finish reasons of a mix; the full counts are in their own table."""
    parts = mix.split(", ")
    more = f" (+{len(parts) - keep} more)" if len(parts) > keep else ""
    return ", ".join(parts[:keep]) + more


def _summary(report: Report) -> Section:
    rows = []
    for _, r in report.summary.iterrows():
        rows.append(
            [
                r["mode"],
                f"{r['provider']} (scripted)"
                if r["provider"] in report.scripted
                else r["provider"],
                fmt_count(r["n"]),
                f"{fmt_pct(r['pass_rate'], 1)} ({r['passed']:,}/{r['n']:,})"
                + (f", {r['errors']:,} errored" if r["errors"] else ""),
                _pct_ci(r["pass_ci_low"], r["pass_ci_high"]),
                fmt_usd(r["cost_mean"]),
                fmt_usd(r["cost_median"]),
                fmt_usd(r["cost_total"]),
                fmt_count(r["cost_unknown"]),
                f"{fmt_num(r['input_tokens_mean'], 0)} / {fmt_num(r['output_tokens_mean'], 0)}",
                fmt_num(r["iterations_mean"]),
                fmt_num(r["llm_calls_mean"]),
                _top_reasons(r["finish_reasons"]),
            ]
        )
    headers = [
        "mode",
        "provider",
        "n",
        "pass rate",
        "95% CI",
        "cost mean",
        "cost median",
        "cost total",
        "cost unknown",
        "tokens in / out (mean)",
        "iterations (mean)",
        "LLM calls (mean)",
        "finish reasons",
    ]
    outro = [
        "Pass rates are over scored cells, with each task counted once (its pass rate over its "
        "epochs); the 95% Wilson interval is over tasks. Costs are over the cells whose cost "
        "is known; 'cost unknown' counts the others. Real models first, then scripted "
        "providers; by pass rate, highest first."
    ]
    for provider, model in sorted(report.priced_as.items()):
        outro.append(
            f"Costs of {provider} are priced as {model}: its real token counts at that model's "
            "genai-prices rates (the model itself is free to run)."
        )
    return Section(
        "summary",
        "Pass rate and cost by mode × provider",
        table=Table(headers, rows, "llrrrrrrrrrrw"),
        outro=outro,
    )


def _pass_k(report: Report) -> Section:
    pk = report.pass_k
    if pk.empty or int(pk["k"].iloc[0]) < 2:
        return Section(
            "pass-k",
            "pass@k and pass^k",
            intro=[
                "Every task ran once: run with `--epochs 3` or more to see pass@k (at least one of "
                "k epochs passes) and pass^k (all k pass)."
            ],
        )
    k = int(pk["k"].iloc[0])
    rows = [
        [
            r["mode"],
            r["provider"],
            fmt_count(r["tasks"]),
            fmt_pct(r["pass_at_1"], 1),
            fmt_pct(r["pass_at_k"], 1),
            fmt_pct(r["pass_hat_k"], 1),
        ]
        for _, r in pk.iterrows()
    ]
    headers = ["mode", "provider", "tasks", "pass@1", f"pass@{k}", f"pass^{k}"]
    return Section(
        "pass-k",
        "pass@k and pass^k",
        table=Table(headers, rows, "llrrrr"),
        outro=[
            f"Over the epochs of each task: pass@{k} is the chance that at least one of {k} "
            f"epochs passes (optimistic), pass^{k} that all {k} pass (how reliable the mode is)."
        ],
    )


def _finish(report: Report) -> Section:
    f = report.finish_reasons
    reasons = [c for c in f.columns if c not in ("mode", "provider")]
    rows = [
        [r["mode"], r["provider"], fmt_count(sum(r[c] for c in reasons)),
         *(fmt_count(r[c]) for c in reasons)]
        for _, r in f.iterrows()
    ]  # fmt: skip
    return Section(
        "finish-reasons",
        "Finish reasons",
        table=Table(["mode", "provider", "cells", *reasons], rows, "llr" + "r" * len(reasons)),
        outro=["How many cells ended with each finish reason; 'cells' is the row's total."],
    )


def _diff_rows(diff: pd.DataFrame) -> list[list[str]]:
    changed = diff[diff["status"].isin(["newly_failing", "newly_passing"])]
    cost_up = diff[(diff["cost_change"] == "up") & ~diff.index.isin(changed.index)]
    cost_up = cost_up.sort_values("cost_delta", ascending=False)
    shown = pd.concat([changed, cost_up]).head(MAX_DIFF_ROWS)
    rows = []
    for r in shown.to_dict("records"):
        rows.append(
            [
                str(r["status"]).replace("_", " "),
                cell_name(r["suite"], r["task_id"], r["mode"], r["provider"], r["epoch"]),
                "–" if isnan(r["finish_reason_base"]) else str(r["finish_reason_base"]),
                "–" if isnan(r["finish_reason_now"]) else str(r["finish_reason_now"]),
                fmt_usd(r["cost_base"]),
                fmt_usd(r["cost_now"]),
                fmt_usd(r["cost_delta"], sign=True),
            ]
        )
    return rows


def _baseline(report: Report) -> Section | None:
    if report.diff is None or report.diff_counts is None:
        return None
    n = report.diff_counts
    intro = [
        f"Against {report.baseline_label}: {n['newly_failing']:,} newly failing, "
        f"{n['newly_passing']:,} newly passing, {n['still_passing']:,} still passing, "
        f"{n['still_failing']:,} still failing; {n['new']:,} new and {n['missing']:,} missing "
        f"cell(s); cost up in {n['cost_up']:,} and down in {n['cost_down']:,} cell(s)"
        + (f"; {n['model_changed']:,} cell(s) changed model" if n["model_changed"] else "")
        + "."
    ]
    rows = _diff_rows(report.diff)
    headers = [
        "change",
        "cell",
        "finish (baseline)",
        "finish (now)",
        "cost baseline",
        "cost now",
        "Δ cost",
    ]
    outro = [f"Showing the first {MAX_DIFF_ROWS} changes."] if len(rows) == MAX_DIFF_ROWS else []
    table = Table(headers, rows, "llllrrr") if rows else None
    return Section("baseline", "Against the baseline", intro=intro, table=table, outro=outro)


#: Kernel settings that differ by mode (ExAthena's behaviour), stated in every report.
MODE_ASYMMETRIES = (
    "ReAct uses the strict no-progress check (the same tool calls with the same results); "
    "Plan-and-Solve and Reflexion use the lax one (also no new text), as ExAthena does. The run "
    'option progress_check = "strict" | "lax" holds it equal across modes.',
    "Plan-and-Solve's planning call counts as one of its max_iterations, so it has one turn "
    "fewer to act than ReAct under the same limit.",
    "Reflexion adds a tool-less critique call (at most 256 tokens) after each of its first 3 "
    "tool-using turns: more calls and tokens per run, counted in its cost.",
)


def _method(report: Report) -> Section:
    bullets = list(MODE_ASYMMETRIES)
    identical = report.summary.loc[report.summary["epochs_identical"].astype(bool)]
    for _, r in identical.iterrows():
        bullets.append(
            f"{r['mode']} on {r['provider']}: every task's epochs were identical (same outcome "
            "and cost), as cassette replay or temperature 0 give; they add no information, and "
            "the statistics count each task once."
        )
    return Section("method", "Method notes", bullets=bullets)


def _errors(report: Report) -> Section | None:
    errors = report.errors
    if errors is None or errors.empty:
        return None
    rows = [
        [f"{r.suite}/{r.task_id}", str(r.mode), str(r.provider), f"e{r.epoch}",
         str(r.error or "")[:160]]
        for r in errors.head(MAX_DIFF_ROWS).itertuples()
    ]  # fmt: skip
    intro = [
        f"{len(errors)} cell(s) could not be scored (status error): they are left out of every "
        "figure above. Re-run them with `harness run ... --retry-errors --label LABEL`."
    ]
    table = Table(["task", "mode", "provider", "epoch", "cause"], rows, "lllll")
    return Section("errors", "Cells that could not be scored", intro=intro, table=table)


def _grid(report: Report) -> Section | None:
    grid = report.grid
    if grid is None or grid.empty:
        return None
    columns = [c for c in grid.columns if c not in ("suite", "task_id", "spread")]
    rows = [
        [f"{r['suite']}/{r['task_id']}", *(str(r[c]) or "–" for c in columns)]
        for _, r in grid.head(MAX_TASK_ROWS).iterrows()
    ]
    intro = [
        "Each cell shows a task's epochs in order: ✓ passed, ✗ failed, ! error (not scored). "
        "Tasks whose pass rate differs most between columns come first."
    ]
    outro = (
        [f"Showing {MAX_TASK_ROWS} of {len(grid)} tasks; `harness view` shows them all."]
        if len(grid) > MAX_TASK_ROWS
        else []
    )
    table = Table(["task", *columns], rows, "l" * (len(columns) + 1))
    return Section("task-grid", "Tasks x modes", intro=intro, table=table, outro=outro)


def _failures(report: Report) -> Section | None:
    bad = report.failures
    if bad is None or bad.empty:
        return None
    rows = [
        [f"{r.suite}/{r.task_id}", str(r.mode), str(r.provider), f"e{r.epoch}", str(r.status),
         str(r.finish_reason), str(r.why)[:300]]
        for r in bad.head(MAX_TASK_ROWS).itertuples()
    ]  # fmt: skip
    intro = [f"{len(bad)} cell(s) failed or errored; why, in the grader's words (or the error)."]
    outro = [f"Showing the first {MAX_TASK_ROWS}."] if len(bad) > MAX_TASK_ROWS else []
    table = Table(["task", "mode", "provider", "epoch", "status", "finish", "why"], rows, "lllllll")
    return Section("failures", "Failing and errored cells", intro=intro, table=table, outro=outro)


def report_sections(report: Report) -> list[Section]:
    """The sections in display order (the baseline one only when a baseline was given)."""
    sections = [verdict_section(report), _summary(report)]
    errors = _errors(report)
    if errors is not None:
        sections.append(errors)
    sections += comparison_sections(report)
    models = model_section(report.models, report.alpha)
    if models is not None:
        sections.append(models)
    if report.bfcl is not None:  # BFCL's own categories, beside the mode comparisons
        sections += bfcl_section(report.bfcl, report.scripted)
    if report.humaneval is not None:
        sections += humaneval_section(report.humaneval, report.scripted)
    sections += [_pass_k(report), _finish(report)]
    sections += [s for s in (_grid(report), _failures(report)) if s is not None]
    sections.append(_method(report))
    base = _baseline(report)
    if base is not None:
        sections.append(base)
    if report.warnings:
        sections.append(Section("warnings", "Warnings", bullets=list(report.warnings)))
    return sections
