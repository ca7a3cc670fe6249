"""Result rows: building one from a :class:`~harness.Result`, checking rows, and turning a batch of
rows into one Arrow table (a shard).

A row is a mapping whose keys are ``results`` columns (see
:data:`~harness.store._schema.RESULT_COLUMNS`: every column there is written, so a new column
needs only that entry and a migration). ``run_id``, ``suite``, ``task_id``, ``mode``,
``provider``, ``epoch`` and ``passed`` are required; ``result_id`` (:func:`next_result_id`),
``cell_key``, ``status`` and ``finished_at`` (now, UTC) are filled in when missing. Values of the
JSON columns (``deliverable``, ``error_diagnostic``, ``no_progress_snapshot``, ``calls``,
``turns``) are Python objects, always encoded (a ``str`` becomes a JSON string); dataclasses,
pydantic models and enums are encoded by field / value.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pydantic import BaseModel
from typing_extensions import TypeIs

from harness._plugins import described
from harness.core._result import Result
from harness.errors import StoreError
from harness.store._arrow import column
from harness.store._schema import JSON_COLUMNS, RESULT_COLUMNS
from harness.store._transcript import encode_transcript

if TYPE_CHECKING:  # imported only where a DataFrame is built
    import pandas as pd

__all__ = [
    "ARROW_SCHEMA",
    "REQUIRED_COLUMNS",
    "cell_key",
    "crashed_row",
    "is_data_frame",
    "json_text",
    "next_result_id",
    "normalize_table",
    "prepare_row",
    "prepared_to_arrow",
    "result_row",
    "rows_to_arrow",
    "storable",
    "turns_json",
]

REQUIRED_COLUMNS = ("run_id", "suite", "task_id", "mode", "provider", "epoch", "passed")
_WRITABLE = tuple(RESULT_COLUMNS)
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


_FIELDS: dict[type, tuple[str, ...]] = {}


def _default(o: Any) -> Any:
    names = _FIELDS.get(type(o))
    if names is not None:
        return {n: getattr(o, n) for n in names}
    if dataclasses.is_dataclass(o) and not isinstance(o, type):
        names = _FIELDS[type(o)] = tuple(f.name for f in dataclasses.fields(o))
        return {n: getattr(o, n) for n in names}
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


_encoder = json.JSONEncoder(default=_default, ensure_ascii=False, separators=(",", ":")).encode


def _encode(value: Any) -> str:
    return str.__str__(value) if isinstance(value, _Raw) else _encoder(value)


def storable(value: Any) -> Any:
    """A plug-in's value for a JSON column (a ``Submit``'s deliverable): itself when it encodes
    as JSON, else a text saying why. A cycle, lists nested 5,000 deep or an object whose ``str``
    raises made no row: the cell was not stored at all (adversary round 14, part A)."""
    if value is None:
        return None
    try:
        _encode(value)
    except Exception as exc:
        return f"(a value that cannot be stored as JSON: {described(exc)})"
    return value


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
    reviews: Sequence[Mapping[str, Any]] = (),
    **extra: Any,
) -> dict[str, Any]:
    """The row of a finished cell. ``mode``/``provider`` default to the Result's own;
    ``status`` defaults to passed/failed from ``passed`` (``error`` with a cause in ``error``).
    The transcript is the Result's messages, ``turns`` marking plan/critique turns by index,
    with a reviewer's decisions (``reviews``) and the malformed reply of a schema failure."""
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
        "deliverable": storable(result.deliverable),
        "text": result.text,
        "error_diagnostic": result.error_diagnostic,
        "no_progress_snapshot": result.no_progress_snapshot,
        "calls": result.calls,
        "turns": turns_json(result),
        "transcript": encode_transcript(
            result.messages, turns, reviews=reviews, malformed=_malformed(result)
        ),
        **extra,
    }


#: A turn's reply is kept to this many characters in ``results.turns`` (the whole text is in the
#: transcript); the calls are kept whole (a grader re-reads them).
TURN_REPLY_CHARS = 2_000


def turns_json(result: Result) -> list[dict[str, Any]] | None:
    """``results.turns``: ``Result.turns`` without the user text (it is in the transcript), one
    object per user turn: ``steps`` (each step's ``[name, arguments]`` calls as the model made
    them), ``reply`` (cut to :data:`TURN_REPLY_CHARS`), ``finish_reason``, and ``added_tools``
    when the turn added some. None when the run recorded no turn."""
    if not result.turns:
        return None
    out: list[dict[str, Any]] = []
    for turn in result.turns:
        reply = turn.reply
        if reply is not None and len(reply) > TURN_REPLY_CHARS:
            reply = reply[:TURN_REPLY_CHARS] + "…"
        item: dict[str, Any] = {
            "steps": [[[name, args] for name, args in step] for step in turn.steps],
            "reply": reply,
            "finish_reason": turn.finish_reason.value if turn.finish_reason else None,
        }
        if turn.added_tools:
            item["added_tools"] = list(turn.added_tools)
        out.append(item)
    return out


def _malformed(result: Result) -> str | None:
    """The reply of an ``error_schema_validation`` ending (kept in ``error_diagnostic`` only)."""
    diagnostic = result.error_diagnostic
    if result.finish_reason.value != "error_schema_validation" or not diagnostic:
        return None
    received = diagnostic.get("received")
    return received if isinstance(received, str) else None


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
            parts.append(
                f"unknown column(s) {sorted(unknown)} (a new column needs an entry in "
                "harness.store._schema.RESULT_COLUMNS and a migration)"
            )
        if missing:
            parts.append(f"missing {missing}")
        raise StoreError(f"results row {n} ({where}): {'; '.join(parts)}")


def _status(row: Mapping[str, Any]) -> str:
    """A row's status when the writer did not give one (as migration 2 backfills it)."""
    if row.get("passed"):
        return "passed"
    return "error" if row.get("error") is not None else "failed"


_last_id = 0
_id_lock = threading.Lock()


def next_result_id() -> int:
    """A ``result_id``: nanoseconds since the epoch, strictly increasing within the process (so
    the views' "latest wins" tie-break follows insert order without a database sequence)."""
    global _last_id
    with _id_lock:
        _last_id = max(time.time_ns(), _last_id + 1)
        return _last_id


# Python types a value of each Arrow type may have without asking Arrow (anything else is
# checked by converting it alone, so numpy scalars and the like still pass).
_PY_TYPES: dict[pa.DataType, tuple[type, ...]] = {
    pa.string(): (str,),
    pa.int64(): (int,),
    pa.int32(): (int,),
    pa.float64(): (float, int),
    pa.bool_(): (bool,),
    pa.timestamp("us"): (datetime,),
    pa.binary(): (bytes,),
}
_TYPES = {f.name: f.type for f in ARROW_SCHEMA}
_INT_RANGES = {pa.int64(): (-(2**63), 2**63 - 1), pa.int32(): (-(2**31), 2**31 - 1)}


def prepare_row(row: Mapping[str, Any], n: int = 0, now: datetime | None = None) -> dict[str, Any]:
    """Check one row and return it ready for :func:`prepared_to_arrow`: JSON columns encoded,
    enums as values, ``result_id``, ``cell_key``, ``finished_at`` and ``status`` filled in, every
    value of the column's type (else :class:`StoreError` naming the row and column)."""
    if not row.keys() <= _ALLOWED or None in [row.get(c) for c in REQUIRED_COLUMNS]:
        _check(row, n)
    out: dict[str, Any] = {}
    for name, value in row.items():
        if value is None:
            continue
        if name in JSON_COLUMNS:
            try:
                value = _encode(value)
            except (TypeError, ValueError, RecursionError) as exc:
                raise StoreError(f"results column {name!r}: cannot encode as JSON: {exc}") from exc
        elif isinstance(value, Enum):
            value = value.value
        value = _exact(value)
        kind = _TYPES[name]
        if (
            type(value) is int
            and kind in _INT_RANGES
            and not _INT_RANGES[kind][0] <= value <= _INT_RANGES[kind][1]
        ):
            # Checked per row: it failed the shard's flush, every row of the run with it
            # (``harness run`` exit 2, the run left ``running``; adversary round 17, part A).
            raise StoreError(f"results column {name!r}: {value:.3g} is past the column's range")
        if not isinstance(value, _PY_TYPES[kind]) or (
            isinstance(value, bool) and kind != pa.bool_()
        ):
            try:
                value = pa.array([value], type=kind)[0].as_py()
            except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as exc:
                raise StoreError(
                    f"results column {name!r}: a value has the wrong type: {exc}"
                ) from exc
        out[name] = value
    if "result_id" not in out:
        out["result_id"] = next_result_id()
    if "cell_key" not in out:
        out["cell_key"] = cell_key(
            out["suite"], out["task_id"], out["mode"], out["provider"], out["epoch"]
        )
    if "finished_at" not in out:
        out["finished_at"] = now or datetime.now(UTC).replace(tzinfo=None)
    if "status" not in out:
        out["status"] = _status(out)
    return out


def _exact(value: Any) -> Any:
    """A subclass of ``str``, ``int``, ``float`` or ``bytes`` as the plain type, through the
    base type's own method: an executor plug-in's outcome may hold a ``str`` whose ``encode``
    raises, and the shard that held it failed to flush with every other row in it lost."""
    kind = type(value)
    if kind in (str, int, float, bool, bytes):
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, bytes):
        return bytes(memoryview(value))
    return value


def prepared_to_arrow(rows: Sequence[Mapping[str, Any]]) -> pa.Table:
    """Rows from :func:`prepare_row` as one Arrow table of :data:`ARROW_SCHEMA` (built from
    buffers: ``pa.array`` would import pandas, see :mod:`harness.store._arrow`)."""
    arrays = []
    for f in ARROW_SCHEMA:
        name = f.name
        try:
            arrays.append(column([r.get(name) for r in rows], f.type))
        except (TypeError, ValueError, OverflowError, UnicodeError) as exc:
            raise StoreError(f"results column {name!r}: a value has the wrong type: {exc}") from exc
    return pa.Table.from_arrays(arrays, schema=ARROW_SCHEMA)


def rows_to_arrow(rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    """Check rows and build one Arrow table in the ``results`` column order."""
    now = datetime.now(UTC).replace(tzinfo=None)
    return prepared_to_arrow([prepare_row(r, n, now) for n, r in enumerate(rows)])


def is_data_frame(rows: object) -> TypeIs[pd.DataFrame]:
    """A pandas DataFrame (to turn into a table for :func:`normalize_table`), asked without
    importing pandas: a run never needs it (~55 MB), and a DataFrame means it is imported."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(rows, pandas.DataFrame)


def normalize_table(table: pa.Table) -> pa.Table:
    """A DataFrame's or Arrow table's rows (``results`` columns, JSON columns as JSON text) as
    a table of :data:`ARROW_SCHEMA`: columns checked, the generated ones filled in."""
    names = table.column_names
    unknown = sorted(set(names) - _ALLOWED)
    missing = [c for c in REQUIRED_COLUMNS if c not in names]
    if unknown or missing:
        raise StoreError(f"results table: unknown columns {unknown}, missing {missing}")
    n = table.num_rows
    rows = table.to_pylist()
    now = datetime.now(UTC).replace(tzinfo=None)
    for row in rows:
        for c in JSON_COLUMNS & row.keys():  # already JSON text: do not encode twice
            row[c] = _Raw(row[c]) if row[c] is not None else None
    prepared = [prepare_row(r, i, now) for i, r in enumerate(rows)]
    assert len(prepared) == n
    return prepared_to_arrow(prepared)


class _Raw(str):
    """JSON text that :func:`json_text` passes through unchanged."""

    __slots__ = ()
