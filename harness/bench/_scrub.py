"""Scrubbing what a run stores and prints: every secret of the run's providers replaced in
each result row (text, nested JSON, the compressed transcript) and in the summary's lines."""

from __future__ import annotations

from typing import Any

from harness.bench._outcome import MatrixSummary
from harness.cassettes._secrets import Redactor

__all__ = ["scrub_summary", "scrubbed"]


def scrubbed(row: dict[str, Any], redact: Redactor) -> dict[str, Any]:
    """``row`` with every secret value replaced in every column: text, JSON values however
    nested (``calls`` with each call's error and response model included) and BLOBs (the
    zlib-compressed transcript is scrubbed inside)."""
    if not redact:
        return row
    return {
        column: _scrubbed_blob(value, redact) if isinstance(value, bytes) else redact.value(value)
        for column, value in row.items()
    }


def _scrubbed_blob(blob: bytes, redact: Redactor) -> bytes:
    import zlib

    try:
        text = zlib.decompress(blob)  # harness.store._transcript
    except zlib.error:
        return redact.data(blob)
    clean = redact.data(text)
    return blob if clean is text else zlib.compress(clean, 6)


def scrub_summary(summary: MatrixSummary, redact: Redactor) -> None:
    """The summary's lines (errors, drift notes) as the caller prints them: scrubbed."""
    if redact:
        summary.errors[:] = [redact.text(line) for line in summary.errors]
        summary.drifted[:] = [redact.text(line) for line in summary.drifted]
