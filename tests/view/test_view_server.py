"""The viewer's pages over real HTTP (uvicorn on 127.0.0.1) on a real bench run."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from click.testing import CliRunner

from harness.cli import main
from harness.store import GridFilters, Store, cell_detail, run_grid


def get(url: str) -> httpx.Response:
    return httpx.get(url, timeout=30)


@pytest.mark.slow
def test_runs_page_lists_both_runs(server: str, bench_db: tuple[Path, str, str]) -> None:
    _, first, second = bench_db
    page = get(server + "/")
    assert page.status_code == 200
    for run in (first, second):
        assert f'href="/runs/{run}"' in page.text
    assert "first" in page.text
    assert "second" in page.text


@pytest.mark.slow
def test_run_page_grid_is_filtered_and_paginated(
    server: str, bench_db: tuple[Path, str, str]
) -> None:
    db, first, _ = bench_db
    page = get(f"{server}/runs/{first}")
    assert page.status_code == 200
    assert page.text.count('<figure class="chart"') == 4
    with Store.open(db, read_only=True) as store:
        everything = run_grid(store, first, GridFilters(), 1, 1000)
        traps = run_grid(store, first, GridFilters(suite="traps"), 1, 1000)
    assert everything.total_tasks > 20  # served 20 per page by the fixture: more than a page
    assert 'rel="next"' in page.text
    assert f"page 1 / {-(-everything.total_tasks // 20)}" in page.text  # 20 tasks per page
    last = get(f"{server}/runs/{first}?page=99")  # past the end: an empty page, not an error
    assert last.status_code == 200
    filtered = get(f"{server}/runs/{first}?suite=traps&status=failed")
    tasks = re.findall(r'<td class="task">(\w+)/', filtered.text)
    assert tasks
    assert set(tasks) == {"traps"}
    assert '<a class="chip passed"' not in filtered.text
    assert '<a class="chip failed"' in filtered.text
    assert 0 < len(tasks) <= traps.total_tasks


def test_separating_sort_puts_tasks_that_split_the_modes_first(
    bench_db: tuple[Path, str, str],
) -> None:
    db, first, _ = bench_db
    with Store.open(db, read_only=True) as store:
        grid = run_grid(store, first, GridFilters(), 1, 1000)
        by_task = run_grid(store, first, GridFilters(sort="task"), 1, 1000)
    spreads = [r["spread"] for r in grid.rows]
    assert spreads == sorted(spreads, reverse=True)
    assert spreads[0] > 0
    assert spreads[-1] == 0
    names = [(r["suite"], r["task_id"]) for r in by_task.rows]
    assert names == sorted(names)


@pytest.mark.slow
def test_cell_page_shows_transcript_verdict_calls_and_spans(
    server: str, bench_db: tuple[Path, str, str]
) -> None:
    db, first, _ = bench_db
    key = "arithmetic/four-step-chain/plan_and_solve/mock/e0"
    page = get(f"{server}/runs/{first}/cell?key={quote(key)}")
    assert page.status_code == 200
    with Store.open(db, read_only=True) as store:
        cell = cell_detail(store, first, key)
    assert cell is not None
    assert cell["transcript"] is not None
    assert cell["grader_explanation"]
    assert cell["grader_explanation"] in page.text.replace("&#39;", "'")
    assert 'class="turn-mark">plan</span>' in page.text  # Plan-and-Solve's plan, marked
    assert page.text.count('class="msg role-') == len(cell["transcript"]["messages"])
    assert "tool call call_" in page.text
    assert "result of call_" in page.text
    assert page.text.count("<tr><td>") >= len(cell["calls"])  # one row per provider call
    assert page.text.count('class="span-bar"') >= 5
    assert f"http://localhost:16686/trace/{cell['trace_id']}" in page.text


@pytest.mark.slow
def test_unknown_cell_and_run_answer_404_pages(
    server: str, bench_db: tuple[Path, str, str]
) -> None:
    _, first, _ = bench_db
    assert get(f"{server}/runs/{first}/cell?key=nope").status_code == 404
    missing = get(f"{server}/runs/no-such-run")
    assert missing.status_code == 404
    assert "no run &#39;no-such-run&#39;" in missing.text


@pytest.mark.slow
def test_compare_lists_flips_and_cost_deltas(server: str, bench_db: tuple[Path, str, str]) -> None:
    _, first, second = bench_db
    page = get(f"{server}/compare?a={first}&b={second}")
    assert page.status_code == 200
    # The second run has no Reflexion: its cells are missing on one side.
    assert re.search(r"\d+ missing", page.text)
    assert '<th class="r">delta</th>' in page.text


@pytest.mark.slow
def test_a_locked_store_gives_a_page_that_says_so(tmp_path: Path) -> None:
    """Another process holds the DuckDB file read-write (a user's `duckdb` shell; harness's own
    writers hold it only for a moment): the page answers 503 and says the store is locked
    (DuckDB lets one process write or several read, never both)."""
    from starlette.testclient import TestClient

    from harness.view import ViewConfig, create_app

    db = tmp_path / "h.duckdb"
    Store.open(db).close()
    holder = subprocess.Popen(
        [sys.executable, "-c",
         f"import duckdb; con = duckdb.connect({str(db)!r}); "
         "print('ready', flush=True); import sys; sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "ready"
        client = TestClient(create_app(ViewConfig(db)), base_url="http://127.0.0.1")
        page = client.get("/")
        assert page.status_code == 503
        assert "locked by a running writer" in page.text
        assert f"PID {holder.pid}" in page.text
    finally:
        holder.communicate("", timeout=30)
    deadline = time.monotonic() + 10
    while (
        TestClient(create_app(ViewConfig(db)), base_url="http://127.0.0.1").get("/").status_code
        != 200
    ):
        assert time.monotonic() < deadline  # readable again once the writer is gone
        time.sleep(0.1)


def test_view_command_checks_its_input(tmp_path: Path) -> None:
    out = CliRunner().invoke(main, ["view", "--db", str(tmp_path / "none.duckdb")])
    assert out.exit_code == 2
    assert "no results database there" in out.output
    db = tmp_path / "h.duckdb"
    Store.open(db).close()
    out = CliRunner().invoke(main, ["view", "--db", str(db), "--trace-url", "http://x/trace"])
    assert out.exit_code == 2
    assert "{trace_id}" in out.output


@pytest.mark.slow
def test_importing_harness_does_not_import_the_viewer() -> None:
    code = (
        "import sys, harness; "
        "print([m for m in ('harness.view', 'starlette', 'uvicorn', 'jinja2') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_harness_view_serves_until_stopped(bench_db: tuple[Path, str, str]) -> None:
    """The command itself: a real process listening on the port it was given."""
    from tests.view.conftest import free_port

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "view", "--db", str(bench_db[0]),
         "--port", str(port), "--warm", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        # The port is bound at once (a port in use is told before anything loads); the URL line
        # says the pages are ready. Connections before it wait in the listen queue.
        assert proc.stderr is not None
        for line in proc.stderr:
            if f"http://127.0.0.1:{port}/" in line:
                break
        else:
            raise AssertionError(f"harness view never gave its URL: {proc.communicate()}")
        page = httpx.get(f"http://127.0.0.1:{port}/", timeout=30)
        assert page.status_code == 200
        assert bench_db[1] in page.text
    finally:
        proc.terminate()
        proc.wait(10)
