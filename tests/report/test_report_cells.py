"""The report's task x mode grid, its failing-cells list, and chart labels that are never cut."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from harness.report import (
    build_report,
    failing_cells_frame,
    prepare_results,
    render_html,
    render_markdown,
    task_grid_frame,
)
from harness.report._charts import CHAR_W, LEFT

Rows = Callable[..., pd.DataFrame]
LONG = "llamacpp-gemma-3-270m-instruct"


def _frame(rows: Rows) -> pd.DataFrame:
    specs = []
    for task, react, plan in (("a", (1, 1), (0, 0)), ("b", (1, 1), (1, 1)), ("c", (1, 0), (1, 1))):
        for mode, outcomes in (("react", react), ("plan_and_solve", plan)):
            for epoch, ok in enumerate(outcomes):
                specs.append({
                    "task_id": task, "mode": mode, "provider": LONG, "epoch": epoch,
                    "passed": bool(ok), "grader_explanation": f"{task}: expected 5, got {epoch}",
                })  # fmt: skip
    specs.append({"task_id": "d", "mode": "react", "provider": LONG, "passed": False,
                  "status": "error", "error": "ProviderError: 500"})  # fmt: skip
    return rows(*specs)


def test_grid_puts_tasks_that_separate_the_modes_first(rows: Rows) -> None:
    p, _ = prepare_results(_frame(rows))
    grid = task_grid_frame(p)
    assert grid["task_id"].tolist() == ["a", "c", "b", "d"]
    assert grid["spread"].tolist() == [1.0, 0.5, 0.0, 0.0]
    a = grid.iloc[0]
    assert a[f"react / {LONG}"] == "✓✓"
    assert a[f"plan_and_solve / {LONG}"] == "✗✗"
    assert grid.iloc[3][f"react / {LONG}"] == "!"


def test_failing_cells_carry_the_graders_explanation(rows: Rows) -> None:
    p, _ = prepare_results(_frame(rows))
    bad = failing_cells_frame(p)
    assert bad.iloc[0]["status"] == "error"
    assert bad.iloc[0]["why"] == "ProviderError: 500"
    failed = bad[bad["status"] == "failed"]
    assert len(failed) == 3
    assert failed["why"].str.contains("expected 5, got").all()


def test_html_and_markdown_have_both_sections(rows: Rows) -> None:
    report = build_report(_frame(rows), n_resamples=200)
    html, md = render_html(report), render_markdown(report)
    assert '<section id="task-grid">' in html
    assert '<section id="failures">' in html
    assert '<b class="ok">✓</b><b class="ok">✓</b>' in html
    assert "## Tasks x modes" in md
    assert "## Failing and errored cells" in md
    assert "c: expected 5, got 1" in md


def test_long_labels_widen_the_bar_charts_instead_of_being_cut(rows: Rows) -> None:
    html = render_html(build_report(_frame(rows), n_resamples=200))
    for chart in ("chart-pass-rate", "chart-finish-reasons", "chart-iterations"):
        figure = re.search(rf'<figure class="chart" id="{chart}">.*?</figure>', html)
        assert figure is not None
        shift = re.search(r'<g transform="translate\((\d+),0\)">', figure.group(0))
        assert shift is not None, chart
        labels = re.findall(r'<text x="([\d.]+)" y="[\d.]+" text-anchor="end">([^<]+)</text>',
                            figure.group(0))  # fmt: skip
        assert labels
        for x, text in labels:
            assert float(x) + int(shift.group(1)) - CHAR_W * len(text) >= 0, (chart, text)
    short = render_html(build_report(rows({}), n_resamples=200))
    assert "translate(" not in short  # short labels: the chart keeps its size
    assert LEFT == 165


@pytest.mark.slow
def test_long_labels_are_inside_the_svg_in_chromium(rows: Rows, tmp_path: Path) -> None:
    """Measured by the browser: every label's box starts inside its SVG."""
    from tests.browser import browser_page

    path = tmp_path / "report.html"
    path.write_text(render_html(build_report(_frame(rows), n_resamples=200)), encoding="utf-8")
    with browser_page() as page:
        page.goto(path.as_uri())
        lefts = page.evaluate(
            "() => [...document.querySelectorAll('svg.chart-svg text')].map(t => "
            "t.getBoundingClientRect().left - t.ownerSVGElement.getBoundingClientRect().left)"
        )
    assert lefts
    assert min(lefts) >= 0


def test_long_lists_scroll_in_a_frame_and_point_to_the_viewer(rows: Rows) -> None:
    """250 failing cells: the report shows 200 in a scrolling frame and says where the other 50
    are (the viewer's grid filtered to failed cells); served by the viewer, it links there."""
    specs = [{"task_id": f"t{i:03d}", "passed": False, "grader_explanation": "no"}
             for i in range(250)]  # fmt: skip
    report = build_report(rows(*specs), n_resamples=50)
    html, md = render_html(report), render_markdown(report)
    failures = html.split('<section id="failures">')[1].split("</section>")[0]
    assert failures.count("<tr><td>s/t") == 200
    assert '<div class="frame long">' in failures
    assert "50 more not shown: <code>harness view</code> lists them all" in failures
    assert "<code>/runs/run-1?status=failed</code>" in failures
    assert "_50 more not shown: `harness view` lists them all (`/runs/run-1?status=failed`" in md
    served = render_html(report, viewer="")
    assert 'href="/runs/run-1?status=failed"' in served
    assert "http" not in html.lower()  # the file written by `harness report` links nowhere
    few = render_html(build_report(rows({"passed": False}), n_resamples=50))
    assert "more not shown" not in few
