"""The viewer's start-up warm-up: what the newest runs' first visits need is computed before
``harness view`` gives its URL (issue 25: a first visit as fast as the next)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.store import Store
from harness.view import _pages


def _clear() -> None:
    with _pages._CACHE_LOCK:
        _pages._CACHE.clear()
        _pages._TEXTS.clear()


def _cached(db: Path, run_id: str) -> dict[str, bool]:
    with Store.open(db, read_only=True) as store:
        state = _pages.run_state(store, run_id)
    return {
        "summary": _pages._peek(("summary", run_id, None, *state))[0],
        "facets": _pages._peek(("facets", run_id, *state))[0],
        "report": _pages._peek(("report", run_id, *state))[0],
        "report page": _pages._peek(("report-html", run_id, *state))[0],
        "transcripts": ("texts", run_id, *state) in _pages._TEXTS,
    }


def test_warm_up_prepares_every_page_of_the_newest_runs(bench_db: tuple[Path, str, str]) -> None:
    db, first, second = bench_db
    _clear()
    assert not any(_cached(db, second).values())
    assert _pages.warm_up(db, 1) == []
    assert all(_cached(db, second).values()), _cached(db, second)
    assert not any(_cached(db, first).values())  # only the newest run was asked for
    assert _pages.warm_up(db, 2) == []
    assert all(_cached(db, first).values()), _cached(db, first)


def test_a_warm_up_past_its_deadline_hands_back_the_runs_it_left(
    bench_db: tuple[Path, str, str],
) -> None:
    db, first, second = bench_db
    _clear()
    assert _pages.warm_up(db, 3, deadline=time.monotonic() - 1) == [second, first]
    assert not any(_cached(db, second).values())


def test_a_warm_up_over_a_missing_store_never_raises(tmp_path: Path) -> None:
    assert _pages.warm_up(tmp_path / "nothing.duckdb", 3) == []


def _first_lines(*args: str) -> tuple[subprocess.Popen[str], list[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "view", "--port", "0", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stderr is not None
    lines = []
    for line in proc.stderr:
        lines.append(line.strip())
        if "http://" in line:
            return proc, lines
    proc.wait(10)
    raise AssertionError("\n".join(lines))


@pytest.mark.slow
@pytest.mark.timeout(90)
def test_harness_view_prepares_runs_before_its_url_unless_told_not_to(
    bench_db: tuple[Path, str, str],
) -> None:
    proc, lines = _first_lines("--db", str(bench_db[0]))
    try:
        assert lines[0] == "harness view: preparing the newest 3 runs' pages", lines
        assert lines[1].startswith("harness view: prepared in "), lines
        assert "http://127.0.0.1:" in lines[2]
    finally:
        proc.terminate()
        proc.wait(10)
    proc, lines = _first_lines("--db", str(bench_db[0]), "--warm", "0")
    try:
        assert len(lines) == 1, lines
        assert "http://127.0.0.1:" in lines[0], lines
    finally:
        proc.terminate()
        proc.wait(10)
