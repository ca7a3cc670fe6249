"""What the viewer's pages compute beyond plain store reads: a run's summary table, verdict and
charts (the report's own), the full report of a run, text search, and a span waterfall's
geometry; and the start-up warm-up that makes a page's first visit as fast as the next ones.

What is computed is cached per run and per state of its results (row count and newest result
id), so a finished run is computed once and a running one again when it grows. A run's report
(:func:`harness.report.build_report`: the verdict sentences, the paired comparisons with their
bootstrap intervals) takes about a second at 10,000 cells, more than a page may take: it is
computed in a background thread (at start-up for the newest runs, else on a page's first
visit, which shows the verdict as pending and fetches it when it is ready).
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from harness.store._browse import GridFilters, report_frame, results_state
from harness.store._queries import Source
from harness.store._search import search_keys, transcript_texts

if TYPE_CHECKING:
    from harness.report._build import Report

__all__ = [
    "cached",
    "full_report",
    "import_report_stack",
    "repeats",
    "run_report",
    "run_state",
    "run_summary",
    "search",
    "verdict",
    "warm_run",
    "warm_up",
    "waterfall",
]

T = TypeVar("T")
_CACHE: OrderedDict[Hashable, Any] = OrderedDict()
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 64
_INFLIGHT: dict[Hashable, threading.Lock] = {}
#: Decompressed transcripts kept for text search: a few runs only (about 1 KB a cell, 10 MB
#: for a run of 10,000 cells).
_TEXTS: OrderedDict[Hashable, dict[str, str | None]] = OrderedDict()
_TEXTS_SIZE = 3
#: The thread that builds runs' reports (one at a time: each one is CPU-bound).
_REPORTS = ThreadPoolExecutor(max_workers=1, thread_name_prefix="harness-view-report")
_PENDING: dict[Hashable, Future[Any]] = {}


def run_state(con: Source, run_id: str | None) -> tuple[int, int]:
    """What a run's results look like now (:func:`~harness.store._browse.results_state`): what
    is cached for a run is computed again when this changes."""
    return results_state(con, run_id)


def repeats(con: Source, run_id: str, state: tuple[int, int]) -> bool:
    """Whether a run stored some cell twice (then readers must pick the latest), cached."""
    from harness.store._browse import run_has_repeats

    return cached(("repeats", run_id, *state), lambda: run_has_repeats(con, run_id))


def _peek(key: Hashable) -> tuple[bool, Any]:
    with _CACHE_LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return True, _CACHE[key]
    return False, None


def cached(key: Hashable, compute: Callable[[], T]) -> T:
    """``compute()``, remembered under ``key`` (a small LRU shared by the app's threads); two
    threads asking for the same key at once compute it once."""
    hit, value = _peek(key)
    if hit:
        return value  # type: ignore[no-any-return]
    with _CACHE_LOCK:
        lock = _INFLIGHT.setdefault(key, threading.Lock())
    with lock:
        hit, value = _peek(key)
        if hit:
            return value  # type: ignore[no-any-return]
        value = compute()
        with _CACHE_LOCK:
            _CACHE[key] = value
            _INFLIGHT.pop(key, None)
            while len(_CACHE) > _CACHE_SIZE:
                _CACHE.popitem(last=False)
    return value


def import_report_stack() -> None:
    """Import what the run and report pages need (pandas, scipy, statsmodels, the report):
    about a second in a fresh interpreter, which is what made a run page's first visit slow."""
    import harness.report._build
    import harness.report._render
    import harness.report._tables  # noqa: F401


def run_summary(con: Source, run_id: str, filters: GridFilters | None = None) -> dict[str, Any]:
    """The report's summary rows (real-model rows first, by pass rate: the report's
    ``sort_summary``) and its four charts (inline SVG) for a run, over the cells ``filters``
    lets through (all of them without)."""
    from harness.report._build import iteration_stats
    from harness.report._providers import scripted_providers
    from harness.report._render import render_charts_of
    from harness.report._tables import finish_reason_frame, prepare_results, scored, summary_frame
    from harness.report._verdicts import sort_summary

    state = run_state(con, run_id)
    narrow = filters if filters is not None and filters.active else None

    def compute() -> dict[str, Any]:
        frame = report_frame(con, run_id, latest=repeats(con, run_id, state), filters=narrow)
        p, _ = prepare_results(frame)
        if p.empty:
            return {"rows": [], "charts": [], "cells": 0, "scripted": frozenset()}
        scripted = scripted_providers(sorted({str(v) for v in p["provider"]}))
        summary = sort_summary(summary_frame(p), scripted)
        charts = render_charts_of(summary, finish_reason_frame(p), iteration_stats(scored(p)))
        return {"rows": summary.to_dict("records"), "charts": charts, "cells": len(p),
                "scripted": scripted}  # fmt: skip

    key = None
    if narrow is not None:
        key = (narrow.suite, narrow.mode, narrow.provider, narrow.status,
               narrow.finish_reason, narrow.keys)  # fmt: skip
    return cached(("summary", run_id, key, *state), compute)


def _build(db: Path, run_id: str, state: tuple[int, int]) -> Report:
    from harness.report._build import build_report
    from harness.store import Store

    with Store.open(db, read_only=True) as store:
        latest = repeats(store, run_id, state)
        frame = report_frame(store, run_id, latest=latest)
    return build_report(frame, title=f"harness report — {run_id}")


def run_report(db: Path, run_id: str, state: tuple[int, int], *, wait: bool) -> Report | None:
    """The report of a run in ``state`` (:func:`run_state`), built by
    :func:`harness.report.build_report` in the background thread and cached. With
    ``wait=False`` it returns ``None`` while the report is still being built (then a later call
    returns it)."""
    key = ("report", run_id, *state)
    hit, value = _peek(key)
    if hit:
        return value  # type: ignore[no-any-return]
    with _CACHE_LOCK:
        future = _PENDING.get(key)
        if future is None:
            future = _REPORTS.submit(_build, db, run_id, state)
            _PENDING[key] = future

            def done(f: Future[Any], key: Hashable = key) -> None:
                with _CACHE_LOCK:
                    _PENDING.pop(key, None)
                    if f.exception() is None:
                        _CACHE[key] = f.result()
                        while len(_CACHE) > _CACHE_SIZE:
                            _CACHE.popitem(last=False)

            future.add_done_callback(done)
    if not wait and not future.done():
        return None
    return future.result()  # type: ignore[no-any-return]


def verdict(report: Report) -> dict[str, Any]:
    """What the run page opens with: the report's verdicts (per real provider, a short headline
    with the full sentence beneath) and its paired comparisons with the minimum detectable
    difference, whether significance was reachable at all, and whether the provider is
    scripted (outside the claim family)."""
    from harness.report._verdicts import asymmetry_notes

    rows = []
    for _, r in report.comparisons.iterrows():
        rows.append(
            {
                **{k: r[k] for k in ("provider", "mode_a", "mode_b", "tasks", "rate_a",
                                     "rate_b", "diff", "diff_ci_low", "diff_ci_high",
                                     "p_holm", "cost_diff", "p_cost_holm", "mdd",
                                     "can_reach", "scripted", "verdict")},
                "notes": asymmetry_notes(r, report.summary, report.finish_reasons),
            }
        )  # fmt: skip
    rows.sort(key=lambda r: (bool(r["scripted"]), str(r["provider"])))
    return {
        "headline": list(report.headline),
        "verdicts": [{"headline": v.headline, "sentence": v.sentence} for v in report.verdicts],
        "comparisons": rows,
    }


def full_report(db: Path, con: Source, run_id: str) -> str:
    """The static report of a run (report.html), as ``harness report`` writes it, its links
    to the failing cells pointing into this viewer."""
    from harness.report._render import render_html

    state = run_state(con, run_id)
    report = run_report(db, run_id, state, wait=True)
    assert report is not None
    return cached(
        ("report-html", run_id, *state),
        lambda: render_html(report, viewer=""),
    )


def _texts(con: Source, run_id: str, state: tuple[int, int], latest: bool) -> dict[str, str | None]:
    """The run's transcripts as searchable text, kept for the next search (a few runs)."""
    key = ("texts", run_id, *state)
    with _CACHE_LOCK:
        texts = _TEXTS.get(key)
        if texts is not None:
            _TEXTS.move_to_end(key)
            return texts
    texts = transcript_texts(con, run_id, latest=latest)
    with _CACHE_LOCK:
        _TEXTS[key] = texts
        while len(_TEXTS) > _TEXTS_SIZE:
            _TEXTS.popitem(last=False)
    return texts


def search(con: Source, run_id: str, q: str, latest: bool) -> tuple[str, ...]:
    """The keys of the cells matching the text search ``q`` (:func:`search_keys`), the run's
    decompressed transcripts kept for the next search."""
    state = run_state(con, run_id)
    texts = _texts(con, run_id, state, latest)
    return cached(
        ("search", run_id, q, *state),
        lambda: search_keys(con, run_id, q, latest=latest, transcripts=texts),
    )


def warm_up(db: Path, runs: int = 3, *, deadline: float | None = None) -> list[str]:
    """Compute the newest ``runs`` runs' summaries, charts, filter values, searchable
    transcripts, reports and report pages, newest first, so that their pages' first visits find
    them cached. :func:`harness.view.serve` calls it before it gives its URL; past ``deadline``
    (a :func:`time.monotonic` value) it stops between runs and returns the run ids it did not
    prepare (the caller finishes them in the background). A locked or unreadable store is left
    to the pages to report: a warm-up never stops the viewer."""
    import time

    from harness.store import Store
    from harness.store._browse import runs_overview

    todo: list[str] = []
    try:
        with Store.open(db, read_only=True) as store:
            cached(("runs", *run_state(store, None)), lambda: runs_overview(store))
            todo = [str(r["run_id"]) for r in runs_overview(store, runs)]
    except Exception:  # the pages report errors; a warm-up only saves time
        return []
    while todo:
        if deadline is not None and time.monotonic() > deadline:
            return todo
        with contextlib.suppress(Exception):  # one run's failure leaves the others prepared
            warm_run(db, todo[0])
        todo.pop(0)
    return []


def warm_run(db: Path, run_id: str) -> None:
    """Prepare one run's pages (:func:`warm_up`)."""
    from harness.store import Store
    from harness.store._browse import run_facets

    with Store.open(db, read_only=True) as store:  # closed before the report is built
        state = run_state(store, run_id)
        latest = repeats(store, run_id, state)
        facets = run_facets(store, run_id, latest=latest)
        cached(("facets", run_id, *state), lambda: facets)
        run_summary(store, run_id)
        _texts(store, run_id, state, latest)  # ready for a first search
    report = run_report(db, run_id, state, wait=True)  # the verdict
    if report is not None:
        from harness.report._render import render_html

        cached(("report-html", run_id, *state), lambda: render_html(report, viewer=""))


def waterfall(spans: list[dict[str, Any]]) -> dict[str, Any]:
    """Each span's bar as percentages of the trace's duration (``left``, ``width``)."""
    if not spans:
        return {"total_ms": 0.0, "bars": []}
    total = max(s["offset_ms"] + s["duration_ms"] for s in spans) or 1.0
    bars = []
    for s in spans:
        left = 100.0 * s["offset_ms"] / total
        width = max(0.3, 100.0 * s["duration_ms"] / total)
        bars.append({**s, "left": min(left, 99.7), "width": min(width, 100.0 - min(left, 99.7))})
    return {"total_ms": total, "bars": bars}
