"""Reading a JSON-lines span file back (the format is described in
:mod:`harness.telemetry._exporters`): :func:`read_spans` gives :class:`SpanRecord` objects with
plain Python attribute values, and accepts numbers where strings are expected; lines a crash cut
short are skipped."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness._files import MAX_INPUT_BYTES, bounded_lines, open_input
from harness.telemetry._otlpjson import KIND_NAMES, decode_attributes

__all__ = ["SpanEventRecord", "SpanRecord", "iter_span_lines", "read_spans"]

log = logging.getLogger("harness.telemetry")


@dataclass(frozen=True, slots=True)
class SpanEventRecord:
    name: str
    time_ns: int
    attributes: dict[str, Any]


@dataclass(frozen=True, slots=True)
class SpanRecord:
    """One span read back from a span file, attributes decoded to plain Python values."""

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    kind: int
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    events: tuple[SpanEventRecord, ...]
    status_code: int
    status_message: str | None
    resource: dict[str, Any]
    scope: str | None

    @property
    def duration_ms(self) -> float:
        return max(0, self.end_ns - self.start_ns) / 1e6

    @property
    def is_error(self) -> bool:
        return self.status_code == 2

    @property
    def kind_name(self) -> str:
        return KIND_NAMES.get(self.kind, str(self.kind))

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> SpanRecord:
        status = d.get("status") or {}
        return cls(
            trace_id=str(d["traceId"]),
            span_id=str(d["spanId"]),
            parent_span_id=str(d.get("parentSpanId") or "") or None,
            name=str(d.get("name", "")),
            kind=int(d.get("kind", 0)),
            start_ns=int(d.get("startTimeUnixNano", 0)),
            end_ns=int(d.get("endTimeUnixNano", 0)),
            attributes=decode_attributes(d.get("attributes")),
            events=tuple(
                SpanEventRecord(
                    str(e.get("name", "")),
                    int(e.get("timeUnixNano", 0)),
                    decode_attributes(e.get("attributes")),
                )
                for e in d.get("events") or ()
            ),
            status_code=int(status.get("code", 0)),
            status_message=status.get("message") or None,
            resource=decode_attributes((d.get("resource") or {}).get("attributes")),
            scope=(d.get("scope") or {}).get("name"),
        )


def iter_span_lines(path: str | Path) -> Iterator[dict[str, Any]]:
    """The raw OTLP-JSON dicts of a span file; unreadable lines (a crash mid-write) skipped,
    the first :data:`_NAMED` of them named. A FIFO or a device is refused at once
    (``OSError``): one hung ``traces show`` forever."""
    skipped = 0
    with open_input(path) as f:
        for n, line in enumerate(bounded_lines(f), 1):
            obj, why = _span_line(line)
            if why is not None:
                skipped += 1
                if skipped <= _NAMED:
                    log.warning("harness: %s:%d: %s, skipped", path, n, why)
            elif isinstance(obj, dict) and "traceId" in obj and "spanId" in obj:
                yield obj
    if skipped > _NAMED:
        log.warning("harness: %s: %d more lines skipped", path, skipped - _NAMED)


#: Unreadable lines of a span file named one by one (a binary file has thousands).
_NAMED = 10


def _span_line(line: bytes | None) -> tuple[Any, str | None]:
    """The JSON value of one line of a span file, or why it is skipped (None for a blank
    line): one endless line (3 GB of zeros) was a ``MemoryError`` traceback, a line that is
    no UTF-8 stopped the whole file, one nested 100,000 deep was a traceback."""
    if line is None:
        return None, f"a line of over {MAX_INPUT_BYTES:,} bytes"
    if not line.strip():
        return None, None
    try:
        return json.loads(line.decode("utf-8")), None
    except (ValueError, RecursionError):
        return None, "not a JSON span"


def read_spans(path: str | Path, *, trace_id: str | None = None) -> list[SpanRecord]:
    """Every span of a span file (of one trace when ``trace_id`` is given), in file order. A
    line whose fields have the wrong types (a start time of ``"x"``: a ``ValueError``
    traceback before) is skipped with a warning, as a line that is no JSON is."""
    spans = []
    for n, d in enumerate(iter_span_lines(path), 1):
        try:
            span = SpanRecord.from_json(d)
        except (ValueError, TypeError, AttributeError, OverflowError, RecursionError) as exc:
            log.warning("harness: %s: span %d: not a span (%s), skipped", path, n, exc)
            continue
        if trace_id is None or span.trace_id == trace_id:
            spans.append(span)
    return spans
