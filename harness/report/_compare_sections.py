"""The report's verdict section and its comparison sections (real providers; scripted ones as
suite checks), format-neutral like :mod:`harness.report._sections`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from harness.report._compare import fmt_mdd
from harness.report._format import fmt_count, fmt_p, fmt_pts, fmt_ratio, fmt_usd, isnan
from harness.report._section_types import Section, Table
from harness.report._verdicts import asymmetry_notes

if TYPE_CHECKING:
    from harness.report._build import Report

__all__ = ["comparison_sections", "verdict_section"]


def _ci(low: Any, high: Any, fmt: Any) -> str:
    return "–" if isnan(low) or isnan(high) else f"{fmt(low)} to {fmt(high)}"


def verdict_section(report: Report) -> Section:
    """Per real provider, a headline read in ten seconds with the full sentence beneath; a
    run of scripted providers only says so."""
    items = [(v.headline, v.sentence) for v in report.verdicts]
    intro = []
    if not items:
        intro = [
            "No real model ran: the scripted (mock) results below check the suites and make "
            "no claim about the modes."
            if report.scripted
            else "No results."
        ]
    outro = []
    if items:
        outro.append(
            "Significant means Holm-adjusted p < "
            f"{report.alpha:g} over every claim of the report (pass rate and cost, every pair and "
            "provider); the runner-up is compared on the tasks both modes ran."
        )
    if report.scripted and items:
        outro.append(
            f"Scripted provider(s) {', '.join(sorted(report.scripted))}: checks of the suites, "
            "listed after the real models and left out of every claim."
        )
    return Section("verdict", "Verdict", intro=intro, items=items, outro=outro)


def _real_rows(c: pd.DataFrame) -> list[list[str]]:
    rows = []
    for _, r in c.iterrows():
        rows.append(
            [
                f"{r['mode_b']} vs {r['mode_a']}",
                r["provider"],
                fmt_count(r["tasks"]),
                fmt_count(r["n_pairs"]),
                f"{r['only_b']:,} / {r['only_a']:,}",
                fmt_pts(r["diff"]),
                _ci(r["diff_ci_low"], r["diff_ci_high"], fmt_pts),
                fmt_p(r["p_value"]),
                fmt_p(r["p_holm"]),
                fmt_mdd(r["mdd"]) if r["can_reach"] else f"none (p ≥ {r['min_p']:.3g})",
                fmt_usd(r["cost_diff"], sign=True),
                _ci(r["cost_diff_ci_low"], r["cost_diff_ci_high"], lambda v: fmt_usd(v, True)),
                fmt_ratio(r["cost_ratio"]),
                fmt_p(r["p_cost_holm"]),
            ]
        )
    return rows


_REAL_HEADERS = [
    "B vs A",
    "provider",
    "tasks",
    "pairs",
    "only B / only A passed",
    "Δ pass rate",
    "95% CI (tasks)",
    "sign test p (tasks)",
    "Holm p",
    "detectable Δ (80% power)",
    "Δ cost per cell",
    "95% CI (tasks)",
    "cost ratio B/A",
    "cost Holm p",
]


def _bullets(report: Report, c: pd.DataFrame) -> list[str]:
    out = []
    for _, r in c.iterrows():
        text = f"{r['verdict']}. Cost: {r['cost_verdict']}."
        notes = asymmetry_notes(r, report.summary, report.finish_reasons)
        if notes:
            text += " Not like for like: " + "; ".join(notes) + "."
        out.append(text)
    return out


def comparison_sections(report: Report) -> list[Section]:
    """Real-model comparisons (one Holm family), then the scripted suite checks."""
    c = report.comparisons
    if c.empty:
        return [
            Section(
                "comparisons",
                "Mode comparisons (paired)",
                intro=["Only one mode ran: nothing to compare."],
            )
        ]
    real = c[~c["scripted"].astype(bool)]
    checks = c[c["scripted"].astype(bool)]
    out: list[Section] = []
    if len(real):
        outro = [
            "Pairs are the cells both modes ran (same suite, task, provider and epoch); the task "
            "is the unit (epochs are repeated measures of it). Pass rates are compared with an "
            "exact sign test over the tasks' pass-rate differences (McNemar's exact test with "
            "one epoch), costs with a Wilcoxon signed-rank test over the tasks' mean cost "
            "differences. Every claim about real models, pass rate and cost, every pair and "
            f"provider, is Holm-adjusted as one family, and a difference is claimed only when "
            f"its adjusted p < {report.alpha:g}; intervals are 95% percentile bootstraps that "
            "resample whole tasks.",
            "'Detectable Δ' is the smallest pass-rate difference the sign test finds with 80% "
            f"power at alpha {report.alpha:g} over that many tasks, given the share of tasks on "
            "which the two modes differed, in the points Δ is in: with several epochs a task "
            "split between them differs by part of a point, so it is scaled by the mean size "
            "of those tasks' differences (docs/report.md). Smaller real differences are likely "
            "to read 'no evidence'; one found significant all the same says so. With 5 tasks or "
            "fewer no outcome can reach p < 0.05 (4 tasks: p ≥ 0.125).",
        ]
        out.append(
            Section(
                "comparisons",
                "Mode comparisons (paired)",
                bullets=_bullets(report, real),
                table=Table(_REAL_HEADERS, _real_rows(real), "llrrrrrrrrrrrr"),
                outro=outro,
            )
        )
    if len(checks):
        rows = [
            [
                f"{r['mode_b']} vs {r['mode_a']}",
                r["provider"],
                fmt_count(r["tasks"]),
                fmt_count(r["n_pairs"]),
                f"{r['b_passed']:,} / {r['a_passed']:,}",
                f"{r['only_b']:,} / {r['only_a']:,}",
                fmt_pts(r["diff"]),
            ]
            for _, r in checks.iterrows()
        ]
        headers = ["B vs A", "provider", "tasks", "pairs", "B / A passed", "only B / only A",
                   "Δ pass rate"]  # fmt: skip
        out.append(
            Section(
                "suite-checks",
                "Suite checks (scripted provider)",
                intro=[
                    "The scripted provider replays replies written by the suite's author: these "
                    "rows check that the suites grade what they should. They are not findings "
                    "about the modes and are not part of any claim."
                ],
                bullets=_bullets(report, checks),
                table=Table(headers, rows, "llrrrrr"),
            )
        )
    return out
