"""Model text cannot act as Markdown or HTML in any report format: mentions, raw HTML, comments,
links and images stay text (issue 27.10)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pandas as pd

from harness.report import build_report, render_html, render_markdown, run_gate
from harness.report._json import render_json

Rows = Callable[..., pd.DataFrame]

HOSTILE = (
    "ping @octocat <img src=x onerror=alert(1)> <!-- the rest is hidden "
    "[click](https://evil.example/p) ![i](http://evil.example/i.png) www.evil.example | end"
)


def _report(rows: Rows) -> pd.DataFrame:
    return rows(
        {"task_id": "t0", "passed": False, "grader_explanation": HOSTILE},
        {"task_id": "t1", "passed": False, "status": "error", "error": HOSTILE},
        {"task_id": "t2", "passed": True},
    )


def test_markdown_neutralises_model_text(rows: Rows) -> None:
    md = render_markdown(build_report(_report(rows), n_resamples=100))
    assert "ping @\u200boctocat" in md
    assert "@octocat" not in md
    assert "<img" not in md
    assert "&lt;img src=x onerror=alert(1)>" in md
    assert "<!--" not in md
    assert "&lt;!-- the rest" in md
    assert "](https://" not in md
    assert "[click\\](https:/\u200b/evil.example/p)" in md
    assert "![i](" not in md
    assert "www.evil" not in md
    assert " | end" not in md  # the pipe cannot open a new table cell
    assert "\\| end" in md
    # Every table row still has the header's number of cells.
    for table in md.split("\n\n"):
        lines = [line for line in table.splitlines() if line.startswith("|")]
        if lines:
            widths = {line.replace("\\|", "").count("|") for line in lines}
            assert len(widths) == 1, table


def test_html_escapes_model_text(rows: Rows) -> None:
    html = render_html(build_report(_report(rows), n_resamples=100))
    assert "<img" not in html
    assert "<!--" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert 'href="https://evil' not in html


def test_gate_markdown_neutralises_model_text(rows: Rows) -> None:
    base = rows({"task_id": "t1"})
    run = rows({"task_id": "t1", "passed": False, "status": "error", "error": HOSTILE})
    md = run_gate(run, base).to_markdown()
    assert "errored: ping @\u200boctocat &lt;img" in md
    assert "<img" not in md
    assert "<!--" not in md
    assert "@octocat" not in md


def test_json_keeps_text_as_data(rows: Rows) -> None:
    doc = json.loads(render_json(build_report(_report(rows), n_resamples=100)))
    assert doc["format"] == "harness-report"  # JSON strings are data: nothing to escape
