"""The viewer's reading aids over real HTTP (uvicorn on 127.0.0.1) on a real bench run: the
report's verdict first, text search over answers and transcripts, the mode filter that the
charts follow, answers in the grid, the compare page's groups and toggles, and the cell page's
folded snapshot, replayed latencies and costs."""

from __future__ import annotations

import re
import time
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from harness.store import Store
from harness.store._browse import GridFilters, cell_detail, run_grid
from harness.store._compare_runs import compare_cells, matrix_differences
from harness.store._search import search_keys
from harness.view._format import snapshot_facts, usd


def get(url: str) -> httpx.Response:
    return httpx.get(url, timeout=60)


def verdict_of(server: str, run: str) -> str:
    """The run's verdict fragment, once the background thread has built the report."""
    deadline = time.monotonic() + 120
    while True:
        page = get(f"{server}/runs/{run}/verdict")
        if page.status_code == 200:
            return page.text
        assert page.status_code == 202
        assert time.monotonic() < deadline, "the verdict was never built"
        time.sleep(0.2)


@pytest.mark.slow
def test_run_page_opens_on_the_reports_verdict(
    server: str, bench_db: tuple[Path, str, str]
) -> None:
    _, first, _ = bench_db
    fragment = verdict_of(server, first)
    from harness.report import build_report
    from harness.store._browse import report_frame

    with Store.open(bench_db[0], read_only=True) as store:
        report = build_report(report_frame(store, first))
    # Mock only: every comparison is scripted (no claim), each row says so.
    assert report.headline == []
    assert "No real provider in this run" in fragment
    rows = re.findall(r"<tr class=\"scripted\">", fragment)
    assert len(rows) == len(report.comparisons) == 3  # three modes, one provider
    page = get(f"{server}/runs/{first}")
    assert page.text.index('id="verdict"') < page.text.index('id="summary"')
    assert page.text.index('id="summary"') < page.text.index('id="grid"')
    assert 'id="comparisons"' in page.text  # cached now: rendered in the page itself
    # The summary table in the report's order (sort_summary: by pass rate, best first).
    order = re.findall(r"<tr class=\"scripted\"><td>(\w+)</td><td>mock", page.text)
    expected = report.summary["mode"].tolist()
    assert order[-len(expected) :] == expected


@pytest.mark.slow
def test_text_search_finds_answers_and_transcripts(
    server: str, bench_db: tuple[Path, str, str]
) -> None:
    db, first, _ = bench_db
    with Store.open(db, read_only=True) as store:
        everything = run_grid(store, first, GridFilters(), 1, 1000)
        cells = store.con.execute(
            "SELECT cell_key, text FROM results WHERE run_id = ? AND text IS NOT NULL "
            "AND length(text) > 3 ORDER BY cell_key LIMIT 1",
            [first],
        ).fetchone()
        assert cells is not None
        key, answer = cells
        by_answer = search_keys(store, first, answer[:20])
        # "calculator" is a tool name: in every transcript that calls it, in a few answers.
        in_answers = store.con.execute(
            "SELECT count(*) FROM results WHERE run_id = ? AND text ILIKE '%calculator%'",
            [first],
        ).fetchone()
        by_tool = search_keys(store, first, "CALCULATOR")
        assert search_keys(store, first, "no such text anywhere 1f3a") == ()
        quoted = search_keys(store, first, '"name"')  # a quote, JSON-escaped inside the blob
    assert key in by_answer
    assert in_answers is not None
    assert in_answers[0] < len(by_tool) < everything.total_tasks * 12  # transcripts found too
    assert quoted == ()  # the key "name" of the stored JSON is not text of the conversation
    page = get(f"{server}/runs/{first}?q=calculator")
    assert page.status_code == 200
    assert f"({len(by_tool)} cells)" in page.text
    chips = re.findall(r'href="/runs/[^/]+/cell\?key=([^"]+)"', page.text)
    assert chips
    assert {c.replace("%2F", "/") for c in chips} <= set(by_tool)


@pytest.mark.slow
def test_mode_filter_narrows_the_grid_and_the_charts(
    server: str, bench_db: tuple[Path, str, str]
) -> None:
    _, first, _ = bench_db
    page = get(f"{server}/runs/{first}?mode=react&answers=1")
    assert page.status_code == 200
    head = page.text.split('id="grid"')[1].split("</thead>")[0]
    assert "react" in head
    assert "reflexion" not in head
    assert "plan_and_solve" not in head
    charts = page.text.split('id="charts"')[1].split('id="grid-section"')[0]
    assert charts.count('<figure class="chart"') == 4
    assert "react / mock" in charts
    assert "reflexion / mock" not in charts
    assert "plan_and_solve / mock" not in charts
    assert 'class="answer"' in page.text  # answers shown under the chips
    assert re.search(r'title="e0 (passed|failed|error) \([a-z_]+\) — answer: ', page.text)
    unfiltered = get(f"{server}/runs/{first}")
    assert "reflexion / mock" in unfiltered.text.split('id="charts"')[1]


@pytest.mark.slow
def test_compare_opens_on_groups_and_flips(server: str, bench_db: tuple[Path, str, str]) -> None:
    db, first, second = bench_db
    with Store.open(db, read_only=True) as store:
        everything = compare_cells(store, first, second, 10_000)
        assert matrix_differences(store, first, first) == []
        differences = matrix_differences(store, first, second)
    assert any(d.startswith("modes differ: only in") and "reflexion" in d for d in differences)
    page = get(f"{server}/compare?a={first}&b={second}")
    assert 'id="matrix-warning"' in page.text
    groups = page.text.split('id="groups"')[1].split("</table>")[0]
    assert groups.count("<tr><td>mock</td>") == 3  # one row per (provider, mode)
    listed = (
        page.text.split('id="compare"')[1].split("</table>")[0]
        if 'id="compare"' in page.text
        else ""
    )
    changed = [r for r in everything if r["flip"]]
    assert listed.count('<tr class="flip-') == min(len(changed), 500)
    assert listed.count('<tr class="">') == 0  # no unchanged row unless asked
    unchanged = len(everything) - len(changed)
    assert f"{unchanged:,} unchanged" in page.text
    flips = get(f"{server}/compare?a={first}&b={second}&show=flips")
    assert "flip-missing" not in flips.text
    both = get(f"{server}/compare?a={first}&b={second}&show=all")
    assert both.text.count('<tr class="">') == min(unchanged, 500 - len(changed))
    same = get(f"{server}/compare?a={first}&b={first}")
    assert 'id="matrix-warning"' not in same.text
    assert "No cell changed status" in same.text
    assert 'id="no-rows"' in same.text


@pytest.mark.slow
def test_cell_page_leads_with_the_transcript(server: str, bench_db: tuple[Path, str, str]) -> None:
    db, first, _ = bench_db
    with Store.open(db, read_only=True) as store:
        row = store.con.execute(
            "SELECT cell_key FROM results WHERE run_id = ? AND no_progress_snapshot IS NOT NULL "
            "ORDER BY cell_key LIMIT 1",
            [first],
        ).fetchone()
        assert row is not None, "the bench has a cell that stopped for lack of progress"
        cell = cell_detail(store, first, row[0])
    assert cell is not None
    page = get(f"{server}/runs/{first}/cell?key={quote(row[0])}").text
    assert page.index('id="transcript"') < page.index('id="facts"')
    assert page.index('id="transcript"') < page.index('id="no-progress"')
    snapshot = (
        page.split('id="no-progress"')[0].rsplit("<details", 1)[1]
        + page.split('id="no-progress"')[1].split("</details>")[0]
    )
    assert " open" not in snapshot.split(">")[0]  # folded
    assert "null" not in snapshot
    assert "<dt>" in snapshot
    # The bench replays cassettes (record mode none): a cell with a cassette says so.
    assert cell["record_mode"] == "none"
    assert cell["replayed"] == bool(cell["cassette"])
    if cell["replayed"]:
        assert "replayed latency" in page
        assert 'id="replayed-note"' in page
    assert "$0.0000<" not in page


def test_money_keeps_significant_digits() -> None:
    assert usd(0.0000880) == "$0.0000880"
    assert usd(-0.0000880) == "-$0.0000880"
    assert usd(0.0128) == "$0.0128"
    assert usd(0) == "$0"
    assert usd(1234.5) == "$1,234.50"
    assert usd(None) == "–"


def test_snapshot_facts_leave_out_empty_fields() -> None:
    facts = snapshot_facts(
        '[{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "name": "calc",'
        ' "arguments": {"x": 1}}], "tool_result": null, "name": null},'
        ' {"role": "tool", "content": "5", "tool_result": null}]'
    )
    assert facts == [
        ("assistant", '{"tool_calls": [{"id": "c1", "name": "calc", "arguments": {"x": 1}}]}'),
        ("tool", "5"),
    ]
    assert snapshot_facts(None) == []


@pytest.mark.parametrize("viewer", [None, "", "http://127.0.0.1:8765"])
def test_report_links_long_lists_to_the_viewer(
    bench_db: tuple[Path, str, str], viewer: str | None
) -> None:
    from harness.report import build_report, render_html
    from harness.store._browse import report_frame

    with Store.open(bench_db[0], read_only=True) as store:
        html = render_html(build_report(report_frame(store, bench_db[1])), viewer=viewer)
    assert '<div class="frame long"><table>' in html  # the grid scrolls in its own frame
    if viewer is None:
        assert "viewer-link" not in html
    else:
        assert f'href="{viewer}/runs/{bench_db[1]}?status=failed"' in html
