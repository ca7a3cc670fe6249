"""Result rows: building one from a :class:`~harness.Result`, checking rows, and turning a batch of
rows into one Arrow table for a bulk insert.

A row is a mapping whose keys are ``results`` columns (see :data:`~harness.store._schema.
RESULT_COLUMNS`). ``run_id``, ``suite``, ``task_id``, ``mode``, ``provider``, ``epoch`` and
``passed`` are required; ``result_id`` is generated; ``cell_key`` and ``finished_at`` (now, UTC)
are filled in when missing. Values of the JSON columns (``deliverable``, ``error_diagnostic``,
``no_progress_snapshot``, ``calls``) are Python objects, always encoded (a ``str`` becomes a JSON
string); dataclasses, pydantic models and enums are encoded by field / value.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path
from typing import Any

import pyarrow as pa
from pydantic import BaseModel

from harness.core._result import Result
from harness.store._schema import JSON_COLUMNS, RESULT_COLUMNS
from harness.store._transcript import encode_transcript
from harness.store.errors import StoreError

__all__ = [
    "REQUIRED_COLUMNS",
    "cell_key",
    "crashed_row",
    "insert_select_list",
    "json_text",
    "result_row",
    "rows_to_arrow",
]

REQUIRED_COLUMNS = ("run_id", "suite", "task_id", "mode", "provider", "epoch", "passed")
_WRITABLE = tuple(c for c in RESULT_COLUMNS if c != "result_id")
_ALLOWED = frozenset(_WRITABLE)

_ARROW_TYPES: dict[str, pa.DataType] = {
    "VARCHAR": pa.string(),
    "JSON": pa.string(),
    "BIGINT": pa.int64(),
    "INTEGER": pa.int32(),
    "DOUBLE": pa.float64(),
    "BOOLEAN": pa.bool_(),
    "TIMESTAMP": pa.timestamp("us"),
    "BLOB": pa.binary(),
}
ARROW_SCHEMA = pa.schema([(c, _ARROW_TYPES[RESULT_COLUMNS[c].split()[0]]) for c in _WRITABLE])


def cell_key(suite: str, task_id: str, mode: str, provider: str, epoch: int) -> str:
    """A matrix cell's ``results.cell_key``: ``suite/task/mode/provider/eN``."""
    return f"{suite}/{task_id}/{mode}/{provider}/e{epoch}"


def _default(o: Any) -> Any:
    if dataclasses.is_dataclass(o) and not isinstance(o, type):
        return {f.name: getattr(o, f.name) for f in dataclasses.fields(o)}
    if isinstance(o, BaseModel):
        return o.model_dump(mode="json")
    if isinstance(o, Enum):
        return o.value
    if isinstance(o, set | frozenset):
        return sorted(o, key=str)
    if isinstance(o, datetime):
        return o.isoformat()
    if isinstance(o, bytes):
        return o.hex()
    if isinstance(o, Path):
        return str(o)
    return str(o)


_encode = json.JSONEncoder(default=_default, ensure_ascii=False, separators=(",", ":")).encode


def json_text(value: Any) -> str | None:
    """A Python value as JSON text (``None`` stays SQL NULL)."""
    return None if value is None else _encode(value)


def result_row(
    result: Result,
    *,
    run_id: str,
    suite: str,
    task_id: str,
    mode: str | None = None,
    provider: str | None = None,
    epoch: int = 0,
    passed: bool,
    score: float | None = None,
    grader_explanation: str | None = None,
    cassette: str | None = None,
    error: str | None = None,
    status: str | None = None,
    turns: Mapping[int, str] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """The row of a finished cell. ``mode``/``provider`` default to the Result's own;
    ``status`` defaults to passed/failed from ``passed`` (``error`` with a cause in ``error``).
    The transcript is the Result's messages, ``turns`` marking plan/critique turns by index."""
    mode = mode or result.mode
    provider = provider or result.provider
    if not mode or not provider:
        raise StoreError(f"{suite}/{task_id}: mode and provider are required for a result row")
    u = result.usage
    return {
        "run_id": run_id,
        "suite": suite,
        "task_id": task_id,
        "mode": mode,
        "provider": provider,
        "model": result.model,
        "epoch": epoch,
        "passed": passed,
        "status": status or ("passed" if passed else "failed"),
        "score": score if score is not None else float(passed),
        "grader_explanation": grader_explanation,
        "finish_reason": result.finish_reason.value,
        "category": result.category.value,
        "halted_reason": result.halted_reason,
        "error": error,
        "iterations": result.iterations,
        "tool_calls": result.tool_calls_made,
        "llm_calls": result.llm_calls,
        "input_tokens": u.input_tokens,
        "output_tokens": u.output_tokens,
        "reasoning_tokens": u.reasoning_tokens,
        "cache_read_tokens": u.cache_read_tokens,
        "cache_write_tokens": u.cache_write_tokens,
        "cost_usd": result.cost_usd,
        "duration_ms": result.duration_ms,
        "trace_id": result.trace_id,
        "cassette": cassette,
        "deliverable": result.deliverable,
        "text": result.text,
        "error_diagnostic": result.error_diagnostic,
        "no_progress_snapshot": result.no_progress_snapshot,
        "calls": result.calls,
        "transcript": encode_transcript(result.messages, turns),
        **extra,
    }


def crashed_row(
    *,
    run_id: str,
    suite: str,
    task_id: str,
    mode: str,
    provider: str,
    epoch: int,
    error: str,
    **extra: Any,
) -> dict[str, Any]:
    """The row of a cell that crashed before it had a Result: a failed result with the error."""
    return {
        "run_id": run_id,
        "suite": suite,
        "task_id": task_id,
        "mode": mode,
        "provider": provider,
        "epoch": epoch,
        "passed": False,
        "status": "error",
        "score": 0.0,
        "error": error,
        **extra,
    }


def _check(row: Mapping[str, Any], n: int) -> None:
    unknown = row.keys() - _ALLOWED
    missing = [c for c in REQUIRED_COLUMNS if row.get(c) is None]
    if unknown or missing:
        where = "/".join(str(row.get(k, "?")) for k in ("suite", "task_id", "mode", "provider"))
        parts = []
        if unknown:
            parts.append(f"unknown column(s) {sorted(unknown)}")
        if missing:
            parts.append(f"missing {missing}")
        raise StoreError(f"results row {n} ({where}): {'; '.join(parts)}")


def _status(row: Mapping[str, Any]) -> str:
    """A row's status when the writer did not give one (as migration 2 backfills it)."""
    if row.get("passed"):
        return "passed"
    return "error" if row.get("error") is not None else "failed"


def rows_to_arrow(rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    """Check rows and build one Arrow table in the ``results`` column order (``result_id``
    left out: the insert generates it)."""
    rows = rows if isinstance(rows, list) else list(rows)
    allowed = _ALLOWED
    for n, row in enumerate(rows):
        if not row.keys() <= allowed or None in [row.get(c) for c in REQUIRED_COLUMNS]:
            _check(row, n)
    now = datetime.now(UTC).replace(tzinfo=None)
    columns: dict[str, list[Any]] = {}
    for name in _WRITABLE:
        if name in JSON_COLUMNS:
            values = [r.get(name) for r in rows]
            try:
                columns[name] = [None if v is None else _encode(v) for v in values]
            except (TypeError, ValueError, RecursionError) as exc:
                raise StoreError(f"results column {name!r}: cannot encode as JSON: {exc}") from exc
        elif name == "cell_key":
            columns[name] = [
                r.get("cell_key")
                or cell_key(r["suite"], r["task_id"], r["mode"], r["provider"], r["epoch"])
                for r in rows
            ]
        elif name == "finished_at":
            columns[name] = [r.get("finished_at") or now for r in rows]
        elif name == "status":
            columns[name] = [r.get("status") or _status(r) for r in rows]
        elif name in ("suite", "task_id", "mode", "provider", "finish_reason", "category"):
            values = [r.get(name) for r in rows]
            columns[name] = [v.value if isinstance(v, Enum) else v for v in values]
        else:
            columns[name] = [r.get(name) for r in rows]
    arrays = []
    for f in ARROW_SCHEMA:
        try:
            arrays.append(pa.array(columns[f.name], type=f.type))
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as exc:
            raise StoreError(
                f"results column {f.name!r}: a value has the wrong type: {exc}"
            ) from exc
    return pa.table(arrays, schema=ARROW_SCHEMA)


def insert_select_list(columns: Sequence[str]) -> str:
    """The SELECT list for a bulk insert of ``columns``: checks names, fills cell_key and
    finished_at ($1) when absent."""
    allowed = set(RESULT_COLUMNS) - {"result_id"}
    unknown = sorted(set(columns) - allowed)
    missing = [c for c in REQUIRED_COLUMNS if c not in columns]
    if unknown or missing:
        raise StoreError(f"results table: unknown columns {unknown}, missing {missing}")
    out = [f'"{c}"' for c in columns if c not in ("cell_key", "finished_at")]
    key = "suite || '/' || task_id || '/' || mode || '/' || provider || '/e' || epoch"
    out.append(
        f"coalesce(cell_key, {key}) AS cell_key" if "cell_key" in columns else f"{key} AS cell_key"
    )
    out.append(
        "coalesce(finished_at, $1) AS finished_at"
        if "finished_at" in columns
        else "$1 AS finished_at"
    )
    return ", ".join(out)
