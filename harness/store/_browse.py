"""Read helpers for browsing a run cell by cell (``harness view``): the runs list, a run's
task x mode grid (filtered, sorted, paginated in SQL), one cell with its transcript and span
tree (two runs compared: :mod:`harness.store._compare_runs`; the text search over a run's
cells: :mod:`harness.store._search`).

Like :mod:`harness.store._queries`, every function takes a DuckDB connection or a
:class:`~harness.store.Store` and reads only the tables and views of docs/sql.md, so it follows
the store wherever its rows live.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.store._queries import Source, _con
from harness.store._transcript import MAX_CONTENT_CHARS, MAX_MESSAGES, decode_transcript

if TYPE_CHECKING:  # pandas is imported where a frame is built (a run never needs it)
    import pandas as pd

__all__ = [
    "REPORT_COLUMNS",
    "GridFilters",
    "GridPage",
    "cell_detail",
    "cell_spans",
    "latest_cells_sql",
    "report_frame",
    "results_state",
    "run_facets",
    "run_grid",
    "run_has_repeats",
    "runs_overview",
]

_CELL = "suite, task_id, mode, provider, epoch"


def latest_cells_sql(columns: str, where: str = "run_id = ?", *, latest: bool = True) -> str:
    """SQL for the latest result of each cell (as ``v_run_cells``) reading only ``columns`` of
    ``results``: the view's ``r.*`` would make the window carry every transcript. With
    ``latest=False`` (the caller knows that no cell of the run was stored twice, see
    :func:`run_has_repeats`) no window is needed at all."""
    if not latest:
        return f"SELECT {columns} FROM results WHERE {where}"
    return (
        f"SELECT {columns} FROM results WHERE {where} QUALIFY row_number() OVER ("
        f"PARTITION BY run_id, {_CELL} ORDER BY finished_at DESC, result_id DESC) = 1"
    )


def results_state(con: Source, run_id: str | None) -> tuple[int, int]:
    """A cheap fingerprint of a run's results (of every run with ``None``): the row count and
    the newest ``result_id``. It changes whenever a result is stored."""
    where, params = ("", []) if run_id is None else (" WHERE run_id = ?", [run_id])
    row = (
        _con(con).execute(f"SELECT count(*), max(result_id) FROM results{where}", params).fetchone()
    )
    return (int(row[0]), int(row[1] or 0)) if row else (0, 0)


#: The columns a report reads (not the transcripts, calls or outputs).
REPORT_COLUMNS = (
    "run_id, suite, task_id, mode, provider, epoch, passed, status, score, finish_reason, "
    "category, iterations, tool_calls, llm_calls, input_tokens, output_tokens, cost_usd, "
    "duration_ms, trace_id, model, error, grader_explanation, halted_reason"
)


def report_frame(
    con: Source, run_id: str, *, latest: bool = True, filters: GridFilters | None = None
) -> pd.DataFrame:
    """The latest result of each cell of a run, :data:`REPORT_COLUMNS` only, in cell order:
    what :func:`harness.report.build_report` needs, without the heavy columns; only the cells
    ``filters`` lets through when given (the run page's charts follow the grid's filters)."""
    where, params = filters.where() if filters is not None else ("run_id = ?", [])
    return (
        _con(con)
        .execute(
            f"SELECT * FROM ({latest_cells_sql(REPORT_COLUMNS, where, latest=latest)}) "
            f"ORDER BY {_CELL}",
            [run_id, *params],
        )
        .df()
    )


def run_has_repeats(con: Source, run_id: str) -> bool:
    """Whether some cell of the run was stored more than once (``--resume``, ``--retry-errors``):
    only then must readers pick each cell's latest result."""
    row = (
        _con(con)
        .execute(
            "SELECT count(*) != count(DISTINCT cell_key) FROM results WHERE run_id = ?", [run_id]
        )
        .fetchone()
    )
    return bool(row and row[0])


def _rows(con: Source, sql: str, params: list[Any] | dict[str, Any]) -> list[dict[str, Any]]:
    cur = _con(con).execute(sql, params)
    names = [d[0] for d in cur.description or ()]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def runs_overview(
    con: Source, limit: int = 200, run_id: str | None = None, *, latest: bool = True
) -> list[dict[str, Any]]:
    """Every run (or only ``run_id``), newest first: label, times, status, cells,
    passed/failed/errors, pass rate (errors left out) and total cost."""
    return _rows(
        con,
        f"""
SELECT b.run_id, b.label, b.started_at, b.finished_at, b.status, b.suites, b.modes,
       b.providers, b.epochs,
       count(c.run_id) AS cells,
       count_if(c.status = 'passed') AS passed,
       count_if(c.status = 'failed') AS failed,
       count_if(c.status = 'error') AS errors,
       count_if(c.status = 'passed') / nullif(count_if(c.status != 'error'), 0) AS pass_rate,
       sum(c.cost_usd) AS cost_usd
FROM bench_runs b LEFT JOIN (
    {latest_cells_sql("run_id, status, cost_usd", "$run IS NULL OR run_id = $run", latest=latest)}
) c
    USING (run_id)
WHERE $run IS NULL OR b.run_id = $run
GROUP BY ALL ORDER BY b.started_at DESC, b.run_id DESC LIMIT $limit""",
        {"limit": limit, "run": run_id},
    )


def run_facets(con: Source, run_id: str, *, latest: bool = True) -> dict[str, list[str]]:
    """The values each grid filter can take in a run: suites, modes, providers, statuses and
    finish reasons (sorted)."""
    keys = ("suite", "mode", "provider", "status", "finish_reason")
    cells = latest_cells_sql(
        "suite, mode, provider, status, coalesce(finish_reason, 'crashed') AS finish_reason",
        latest=latest,
    )
    lists = ", ".join(f"list_sort(list(DISTINCT {k}))" for k in keys)
    row = _con(con).execute(f"SELECT {lists} FROM ({cells})", [run_id]).fetchone()
    found = row or (None,) * len(keys)
    return {
        k: [str(v) for v in values or [] if v is not None]
        for k, values in zip(keys, found, strict=True)
    }


@dataclass(frozen=True, slots=True)
class GridFilters:
    """Which cells the grid (and the run page's charts) show (``None``: any) and how tasks are
    ordered: ``separating`` (tasks whose pass rate differs most between columns first) or
    ``task``. ``q`` is a text search over answers and transcripts; the caller resolves it to
    the matching cells' keys (:func:`~harness.store._search.search_keys`) and passes them as
    ``keys``."""

    suite: str | None = None
    mode: str | None = None
    provider: str | None = None
    status: str | None = None
    finish_reason: str | None = None
    sort: str = "separating"
    q: str | None = None
    keys: tuple[str, ...] | None = None

    @property
    def active(self) -> bool:
        """Whether any filter narrows the cells (the sort does not)."""
        return any((self.suite, self.mode, self.provider, self.status, self.finish_reason,
                    self.q)) or self.keys is not None  # fmt: skip

    def where(self) -> tuple[str, list[Any]]:
        clauses: list[str] = ["run_id = ?"]
        params: list[Any] = []
        for column, value in (
            ("suite", self.suite),
            ("mode", self.mode),
            ("provider", self.provider),
            ("status", self.status),
            ("coalesce(finish_reason, 'crashed')", self.finish_reason),
        ):
            if value:
                clauses.append(f"{column} = ?")
                params.append(value)
        if self.keys is not None:
            clauses.append("list_contains(?, cell_key)")
            params.append(list(self.keys))
        return " AND ".join(clauses), params


#: How many characters of a cell's answer the grid shows (its tooltip and answer line).
ANSWER_CHARS = 160


@dataclass(slots=True)
class GridPage:
    """One page of the grid: ``columns`` are (mode, provider) pairs; each row is a task with,
    per column, its epochs as ``{"epoch", "status", "key"}`` chips."""

    columns: list[tuple[str, str]]
    rows: list[dict[str, Any]] = field(default_factory=list)
    total_tasks: int = 0
    page: int = 1
    per_page: int = 50

    @property
    def pages(self) -> int:
        return max(1, -(-self.total_tasks // self.per_page))


def run_grid(
    con: Source,
    run_id: str,
    filters: GridFilters,
    page: int = 1,
    per_page: int = 50,
    *,
    latest: bool = True,
) -> GridPage:
    """One page of the task x (mode, provider) grid of a run, filtered and sorted in SQL (only
    the page's cells are read)."""
    where, params = filters.where()
    cells = latest_cells_sql(f"{_CELL}, status, cell_key, finish_reason", where, latest=latest)
    columns = [
        (str(m), str(p))
        for m, p in _con(con)
        .execute(f"SELECT DISTINCT mode, provider FROM ({cells}) ORDER BY 1, 2", [run_id, *params])
        .fetchall()
    ]
    order = "spread DESC, suite, task_id" if filters.sort == "separating" else "suite, task_id"
    tasks_sql = f"""
WITH c AS ({cells}),
per_column AS (
    SELECT suite, task_id, mode, provider,
           count_if(status = 'passed') / nullif(count_if(status != 'error'), 0) AS rate
    FROM c GROUP BY ALL),
tasks AS (
    SELECT suite, task_id, coalesce(max(rate) - min(rate), 0) AS spread
    FROM per_column GROUP BY ALL)
SELECT suite, task_id, spread, count(*) OVER () AS total FROM tasks
ORDER BY {order} LIMIT ? OFFSET ?"""
    page = min(max(1, page), 1_000_000)  # OFFSET stays a BIGINT whatever is asked
    found = _rows(con, tasks_sql, [run_id, *params, per_page, (page - 1) * per_page])
    grid = GridPage(columns, total_tasks=int(found[0]["total"]) if found else 0, page=page)
    grid.per_page = per_page
    if not found:
        return grid
    keys = [f"{r['suite']}\x1f{r['task_id']}" for r in found]
    cells = latest_cells_sql(
        f"{_CELL}, status, cell_key, finish_reason, left(text, {ANSWER_CHARS + 1}) AS answer, "
        "grader_explanation",
        where,
        latest=latest,
    )
    chips = _rows(
        con,
        f"SELECT * FROM ({cells}) "
        "WHERE list_contains(?, suite || chr(31) || task_id) ORDER BY epoch",
        [run_id, *params, keys],
    )
    by_task: dict[str, dict[tuple[str, str], list[dict[str, Any]]]] = {k: {} for k in keys}
    for chip in chips:
        slot = by_task[f"{chip['suite']}\x1f{chip['task_id']}"]
        slot.setdefault((chip["mode"], chip["provider"]), []).append(
            {
                "epoch": chip["epoch"],
                "status": chip["status"],
                "key": chip["cell_key"],
                "finish_reason": chip["finish_reason"],
                "answer": _clip(chip["answer"]),
                "why": _clip(chip["grader_explanation"]),
            }
        )
    for r, key in zip(found, keys, strict=True):
        grid.rows.append(
            {
                "suite": r["suite"],
                "task_id": r["task_id"],
                "spread": r["spread"],
                "cells": by_task[key],
            }
        )
    return grid


def _clip(text: str | None, limit: int = ANSWER_CHARS) -> str | None:
    if text is None:
        return None
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def cell_detail(con: Source, run_id: str, key: str) -> dict[str, Any] | None:
    """The latest result of cell ``key`` (``results.cell_key``) in a run, JSON columns decoded
    and ``transcript`` decompressed (``None`` when the run has no such cell)."""
    rows = _rows(
        con,
        "SELECT * FROM results WHERE run_id = ? AND cell_key = ? "
        "ORDER BY finished_at DESC, result_id DESC LIMIT 1",
        [run_id, key],
    )
    if not rows:
        return None
    row = rows[0]
    notes: list[str] = []
    for column, value in row.items():  # a model's deliverable of 60 MB was a 120 MB page; a
        if not isinstance(value, str):  # store edited by hand, any column: each is cut
            continue  # (adversary round 22, part B)
        if column != "calls":
            row[column] = _cut_text(value, column, notes)
        elif len(value) > _CALLS_CHARS:  # each call is a row of the table: cut once read
            row[column] = None
            notes.append(f"the provider calls ({len(value)} characters) not shown")
    for column in ("deliverable", "error_diagnostic", "no_progress_snapshot", "calls"):
        value = row.get(column)
        row[column] = _json_shown(value) if isinstance(value, str) else None
    calls = row["calls"]
    if isinstance(calls, list) and len(calls) > MAX_MESSAGES:
        half = MAX_MESSAGES // 2
        notes.append(f"{len(calls) - 2 * half} provider calls not shown")
        row["calls"] = calls[:half] + calls[-half:]
    row["not_shown"] = "; ".join(notes) or None
    row["transcript"] = shown_transcript(decode_transcript(row.get("transcript")))
    mode = (
        _con(con)
        .execute(
            "SELECT json_extract_string(config, '$.record_mode') FROM bench_runs WHERE run_id = ?",
            [run_id],
        )
        .fetchone()
    )
    row["record_mode"] = mode[0] if mode else None
    #: Latencies of a cell replayed from its cassette are the replay's, not the provider's.
    row["replayed"] = bool(row.get("cassette")) and row["record_mode"] == "none"
    return row


def cell_spans(con: Source, run_id: str, trace_id: str) -> list[dict[str, Any]]:
    """A trace's spans in tree order (children after their parent, in start order; a span
    whose parent is missing is a root) with their ``depth`` and ``offset_ms`` from the trace's
    first span, for a waterfall. One scan of ``spans``; the tree is built here."""
    rows = _rows(
        con,
        "SELECT span_id, parent_span_id, name, kind, status_code, status_message, duration_ms, "
        "attributes, epoch_ns(start_time) AS start_ns FROM spans "
        "WHERE run_id = ? AND trace_id = ? ORDER BY start_time, span_id",
        [run_id, trace_id],
    )
    if not rows:
        return []
    first = min(r["start_ns"] or 0 for r in rows)
    ids = {r["span_id"] for r in rows}
    children: dict[str | None, list[dict[str, Any]]] = {}
    for r in rows:
        parent = r["parent_span_id"] if r["parent_span_id"] in ids else None
        children.setdefault(parent, []).append(r)
    out: list[dict[str, Any]] = []
    stack = [(r, 0) for r in reversed(children.get(None, []))]
    while stack:
        r, depth = stack.pop()
        r["depth"] = depth
        r["offset_ms"] = ((r.pop("start_ns") or first) - first) / 1e6
        r["duration_ms"] = r["duration_ms"] or 0.0
        r["attributes"] = json.loads(r["attributes"]) if r["attributes"] else {}
        out.append(r)
        stack.extend((c, depth + 1) for c in reversed(children.get(r["span_id"], [])))
    return out


#: A transcript's text on the cell page: what the writer keeps, twice over (past it, the store
#: was edited by hand).
_SHOWN_CHARS = 2 * MAX_CONTENT_CHARS
#: The provider calls' JSON read for the cell page at most (a call is some 400 characters).
_CALLS_CHARS = 64 << 20


def shown_transcript(doc: dict[str, Any] | None) -> dict[str, Any] | None:
    """A stored transcript as the cell page shows it: a store edited by hand can hold what the
    writer never keeps (one 128 MiB message made a 134 MB page; adversary round 21, part B),
    so each message's texts past :data:`_SHOWN_CHARS` characters and the messages past
    :data:`~harness.store._transcript.MAX_MESSAGES` are cut, as the writer cuts them, saying
    so."""
    messages = doc.get("messages") if doc is not None else None
    if doc is None or not isinstance(messages, list):
        return doc
    notes: list[str] = []
    if len(messages) > MAX_MESSAGES + 2:
        half = MAX_MESSAGES // 2
        notes.append(f"{len(messages) - 2 * half} messages not shown")
        messages = messages[:half] + messages[-half:]
    shown = [_shown_message(m, n, notes) for n, m in enumerate(messages)]
    cut = [str(doc["cut"])[:_SHOWN_CHARS]] if doc.get("cut") else []
    return {**doc, "messages": shown, "cut": "; ".join(cut + notes) or None}


def _shown_message(message: Any, n: int, notes: list[str]) -> dict[str, Any]:
    if not isinstance(message, dict) or len(message) > 16:  # not one the writer makes
        text = _cut_text(_as_json(message), f"message {n}", notes)
        return {"role": "?", "content": text}
    shown = {}
    for key, value in message.items():
        if key in ("tool_calls", "tool_result"):  # their texts as JSON, cut as one
            text = _as_json(value)
            if len(text) > _SHOWN_CHARS:
                shown["content"] = _cut_text(text, f"message {n} ({key})", notes)
                continue
        elif not isinstance(value, str | int | float | bool | None):
            value = _cut_text(_as_json(value), f"message {n} ({key})", notes)
        elif isinstance(value, str):
            value = _cut_text(value, f"message {n} ({key})", notes)
        shown[str(key)] = value
    return shown


def _json_shown(text: str) -> Any:
    """A JSON column's value; its text as it is when cut for the page or unreadable."""
    if text.endswith(" characters not shown ...]"):
        return text
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # nested past the parser (a store edited by hand)
        return text


def _as_json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (ValueError, RecursionError):  # nested past the encoder
        return "(not shown: nested too deep)"


def _cut_text(text: str, where: str, notes: list[str]) -> str:
    if len(text) <= _SHOWN_CHARS:
        return text
    dropped = len(text) - _SHOWN_CHARS
    if where:
        notes.append(f"{where}: {dropped} characters not shown")
    return f"{text[:_SHOWN_CHARS]}\n[... {dropped} characters not shown ...]"
