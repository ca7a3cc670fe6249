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

from harness.store.queries import Source, _con

__all__ = ["full_report", "run_summary", "waterfall"]

T = TypeVar("T")
_CACHE: OrderedDict[Hashable, Any] = OrderedDict()
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 32

#: The columns the summary and the report read (not the transcripts, calls or outputs).
_COLUMNS = (
    "run_id, suite, task_id, mode, provider, epoch, passed, status, score, finish_reason, "
    "category, iterations, tool_calls, llm_calls, input_tokens, output_tokens, cost_usd, "
    "duration_ms, trace_id, model, error, grader_explanation, halted_reason"
)


def _state(con: Source, run_id: str) -> tuple[int, int]:
    row = (
        _con(con)
        .execute("SELECT count(*), max(result_id) FROM results WHERE run_id = ?", [run_id])
        .fetchone()
    )
    return (int(row[0]), int(row[1] or 0)) if row else (0, 0)


def _cached(key: Hashable, compute: Callable[[], T]) -> T:
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


def _frame(con: Source, run_id: str) -> Any:
    return (
        _con(con)
        .execute(
            f"SELECT {_COLUMNS} FROM v_run_cells WHERE run_id = ? "
            "ORDER BY suite, task_id, mode, provider, epoch",
            [run_id],
        )
        .df()
    )


def run_summary(con: Source, run_id: str) -> dict[str, Any]:
    """The report's summary rows and its four charts (inline SVG) for a run."""
    from harness.report.build import iteration_stats
    from harness.report.render import render_charts_of
    from harness.report.tables import finish_reason_frame, prepare_results, scored, summary_frame

    def compute() -> dict[str, Any]:
        p, _ = prepare_results(_frame(con, run_id))
        if p.empty:
            return {"rows": [], "charts": []}
        summary = summary_frame(p)
        charts = render_charts_of(summary, finish_reason_frame(p), iteration_stats(scored(p)))
        return {"rows": summary.to_dict("records"), "charts": charts}

    return _cached(("summary", run_id, *_state(con, run_id)), compute)


def full_report(con: Source, run_id: str) -> str:
    """The static report of a run (report.html), as ``harness report`` writes it."""
    from harness.report.build import build_report
    from harness.report.render import render_html

    def compute() -> str:
        return render_html(build_report(_frame(con, run_id), title=f"harness report — {run_id}"))

    return _cached(("report", run_id, *_state(con, run_id)), compute)


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
