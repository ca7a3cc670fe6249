"""Arrow columns built from their buffers, so that a run never imports pandas.

``pyarrow.array`` (and ``pa.table`` from lists, ``pa.scalar``, ``Schema.empty_table``) asks
pyarrow's pandas shim whether the input is a pandas object, and that imports pandas: about
55 MB of resident memory in a process that never builds a DataFrame (docs/performance.md). The
shard writer builds its columns here instead: numpy arrays (numpy is imported by pyarrow
already) wrapped as Arrow buffers with ``Array.from_buffers``. Only the types of
:data:`~harness.store._rows.ARROW_SCHEMA` are supported, from the Python types
:func:`~harness.store._rows.prepare_row` guarantees (``str``, ``bytes``, ``int``, ``float``,
``bool``, naive UTC ``datetime``); ``None`` is null. The result equals what ``pa.array`` builds
(a property test compares them). A value of another type (a numpy scalar, say) is still
converted by ``prepare_row`` with ``pa.array``, which imports pandas: rows the bench writes never
hold one.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pyarrow as pa

from harness.store._text import utf8

__all__ = ["column", "empty_table"]

_EPOCH = datetime(1970, 1, 1)
_MICROSECOND = timedelta(microseconds=1)
_INT32_MAX = 2**31 - 1


def empty_table(schema: pa.Schema) -> pa.Table:
    """A table of ``schema`` with no rows (``schema.empty_table()`` imports pandas)."""
    return pa.Table.from_batches([], schema=schema)


def _validity(values: Sequence[Any]) -> tuple[pa.Buffer | None, int]:
    valid = np.fromiter((v is not None for v in values), dtype=np.bool_, count=len(values))
    nulls = len(values) - int(valid.sum())
    if nulls == 0:
        return None, 0
    return pa.py_buffer(np.packbits(valid, bitorder="little").data), nulls


def _micros(value: datetime) -> int:
    if value.tzinfo is not None:  # as pa.array does: an aware time is stored in UTC
        value = value.astimezone(UTC).replace(tzinfo=None)
    return (value - _EPOCH) // _MICROSECOND


def _bytes_column(values: Sequence[Any], kind: pa.DataType) -> pa.Array[Any]:
    try:
        parts = [
            b"" if v is None else (v.encode("utf-8") if isinstance(v, str) else v) for v in values
        ]
    except UnicodeEncodeError:  # a lone surrogate somewhere: replaced, never raised
        parts = [b"" if v is None else (utf8(v) if isinstance(v, str) else v) for v in values]
    lengths = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts))
    offsets = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if offsets[-1] > _INT32_MAX:
        raise OverflowError(f"{offsets[-1]} bytes in one column of one shard (at most 2 GiB)")
    validity, nulls = _validity(values)
    data = pa.py_buffer(b"".join(parts))
    return pa.Array.from_buffers(
        kind, len(parts), [validity, pa.py_buffer(offsets.astype(np.int32).data), data], nulls
    )


def _fixed_width(
    values: Sequence[Any], kind: pa.DataType, data: np.ndarray[Any, Any]
) -> pa.Array[Any]:
    """A bool or number column: ``data`` holds the values (anything at a null's place), the
    validity bitmap comes from where ``values`` holds ``None``."""
    validity, nulls = _validity(values)
    return pa.Array.from_buffers(kind, len(values), [validity, pa.py_buffer(data.data)], nulls)


_NUMPY: dict[pa.DataType, type[np.generic]] = {
    pa.int64(): np.int64,
    pa.int32(): np.int32,
    pa.float64(): np.float64,
    pa.timestamp("us"): np.int64,
}


def column(values: Sequence[Any], kind: pa.DataType) -> pa.Array[Any]:
    """One Arrow array of type ``kind`` holding ``values`` (``None`` is null).

    Raises ``TypeError``, ``ValueError`` or ``OverflowError`` for a value that does not fit
    ``kind`` (a string in an integer column, an integer past int32)."""
    if kind in (pa.string(), pa.binary()):
        return _bytes_column(values, kind)
    if kind == pa.bool_():
        bits = np.fromiter((bool(v) for v in values), dtype=np.bool_, count=len(values))
        return _fixed_width(values, kind, np.packbits(bits, bitorder="little"))
    dtype = _NUMPY.get(kind)
    if dtype is None:
        raise TypeError(f"no buffer builder for Arrow type {kind}")
    if kind == pa.timestamp("us"):
        filled: list[Any] = [0 if v is None else _micros(v) for v in values]
    else:
        filled = [0 if v is None else v for v in values]
    if dtype is not np.float64 and any(isinstance(v, float) for v in filled):
        raise TypeError(f"a float in a column of {kind}")
    return _fixed_width(values, kind, np.array(filled, dtype=dtype))
