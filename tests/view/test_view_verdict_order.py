"""The run page's verdict fragment, rendered from a report with a real provider: the headline
above its sentence, each comparison row in the order of the sentence under it ("b vs a", the
rates in that order), and the detectable difference as the sentence states it."""

from __future__ import annotations

import re
from html import unescape

import pandas as pd

from harness.report import Report, build_report
from harness.view import _pages as pages
from harness.view._app import _env


def _frame() -> pd.DataFrame:
    """40 tasks: "a" passes 14, "b" 12; they differ on 6 (4 to 2): no evidence, a finite MDD."""
    outcomes = [(True, True)] * 10 + [(True, False)] * 4 + [(False, True)] * 2
    outcomes += [(False, False)] * 24
    rows = [
        {"run_id": "r1", "suite": "s", "task_id": f"t{i:02d}", "mode": mode, "provider": "live",
         "model": "m", "epoch": 0, "passed": passed, "score": float(passed),
         "grader_explanation": "", "finish_reason": "stop", "category": "success",
         "iterations": 1, "tool_calls": 0, "llm_calls": 1, "input_tokens": 10,
         "output_tokens": 5, "cost_usd": 0.01, "duration_ms": 10, "trace_id": "0" * 32}
        for i, pair in enumerate(outcomes)
        for mode, passed in zip(("a", "b"), pair, strict=True)
    ]  # fmt: skip
    return pd.DataFrame(rows)


def _fragment() -> tuple[str, Report]:
    report = build_report(_frame(), n_resamples=200)
    template = _env().get_template("_verdict.html")
    return template.render(run_id="r1", verdict=pages.verdict(report)), report


def test_the_headline_stands_above_its_sentence() -> None:
    html, report = _fragment()
    v = report.verdicts[0]
    text = unescape(html)
    assert text.index(v.headline) < text.index(v.sentence)


def test_the_row_reads_in_the_order_of_its_sentence() -> None:
    html, report = _fragment()
    c = report.comparisons.iloc[0]
    assert (c["mode_a"], c["mode_b"]) == ("a", "b")
    cells = re.findall(r"<td[^>]*>(.*?)</td>", unescape(html))
    assert "b vs a" in cells
    sentence = next(t for t in cells if t.startswith("b vs a (live):"))
    assert "35% vs 30%" not in cells  # a's rate first would contradict "b vs a"
    assert "30% vs 35%" in cells
    # The sentence's "detectable ... N pts or more" is the row's figure.
    stated = re.search(r"detectable at 80% power over 40 tasks: (\d+ pts) or more", sentence)
    assert stated is not None
    assert stated.group(1) in cells
