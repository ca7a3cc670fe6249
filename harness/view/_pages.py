"""What the viewer's pages compute beyond plain store reads: a run's summary table and charts
(the report's own), the full report of a run, and a span waterfall's geometry.

The summary and the full report are cached per run and per state of its results (row count and
newest result id), so a finished run is computed once and a running one again when it grows.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from harness.store._browse import report_frame, results_state
from harness.store._queries import Source

__all__ = ["cached", "full_report", "repeats", "run_state", "run_summary", "waterfall"]

T = TypeVar("T")
_CACHE: OrderedDict[Hashable, Any] = OrderedDict()
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 32


def run_state(con: Source, run_id: str | None) -> tuple[int, int]:
    """What a run's results look like now (:func:`~harness.store._browse.results_state`): what
    is cached for a run is computed again when this changes."""
    return results_state(con, run_id)


def repeats(con: Source, run_id: str, state: tuple[int, int]) -> bool:
    """Whether a run stored some cell twice (then readers must pick the latest), cached."""
    from harness.store._browse import run_has_repeats

    return cached(("repeats", run_id, *state), lambda: run_has_repeats(con, run_id))


def cached(key: Hashable, compute: Callable[[], T]) -> T:
    """``compute()``, remembered under ``key`` (a small LRU shared by the app's threads)."""
    with _CACHE_LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]  # type: ignore[no-any-return]
    value = compute()
    with _CACHE_LOCK:
        _CACHE[key] = value
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return value


def run_summary(con: Source, run_id: str) -> dict[str, Any]:
    """The report's summary rows and its four charts (inline SVG) for a run."""
    from harness.report._build import iteration_stats
    from harness.report._render import render_charts_of
    from harness.report._tables import finish_reason_frame, prepare_results, scored, summary_frame

    state = run_state(con, run_id)

    def compute() -> dict[str, Any]:
        p, _ = prepare_results(report_frame(con, run_id, latest=repeats(con, run_id, state)))
        if p.empty:
            return {"rows": [], "charts": []}
        summary = summary_frame(p)
        charts = render_charts_of(summary, finish_reason_frame(p), iteration_stats(scored(p)))
        return {"rows": summary.to_dict("records"), "charts": charts}

    return cached(("summary", run_id, *state), compute)


def full_report(con: Source, run_id: str) -> str:
    """The static report of a run (report.html), as ``harness report`` writes it."""
    from harness.report._build import build_report
    from harness.report._render import render_html

    def compute() -> str:
        frame = report_frame(con, run_id)
        return render_html(build_report(frame, title=f"harness report — {run_id}"))

    return cached(("report", run_id, *run_state(con, run_id)), compute)


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
