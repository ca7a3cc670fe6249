"""Scrubbing what a run stores and prints: every secret of the run's providers replaced in
each result row (text, nested JSON, the compressed transcript) and in the summary's lines."""

from __future__ import annotations

from typing import Any

from harness.bench._outcome import MatrixSummary
from harness.cassettes._secrets import Redactor

__all__ = ["IDENTITY_COLUMNS", "scrub_summary", "scrubbed"]

#: The columns naming a cell: the user's own names (suite file, command line), never a
#: provider's output, kept as they are so that ``--resume`` finds the cell again even when a
#: secret's value is also a suite, task, mode or provider name (adversary round 9).
IDENTITY_COLUMNS = frozenset(
    ("run_id", "suite", "task_id", "mode", "provider", "epoch", "cell_key", "cassette")
)


def scrubbed(row: dict[str, Any], redact: Redactor) -> dict[str, Any]:
    """``row`` with every secret value replaced in every column but the cell's names
    (:data:`IDENTITY_COLUMNS`): text, JSON values however nested (``calls`` with each call's
    error and response model included) and BLOBs (the zlib-compressed transcript is scrubbed
    inside)."""
    if not redact:
        return row
    return {
        column: value if column in IDENTITY_COLUMNS
        else _scrubbed_blob(value, redact) if isinstance(value, bytes)
        else redact.value(value)
        for column, value in row.items()
    }  # fmt: skip


def _scrubbed_blob(blob: bytes, redact: Redactor) -> bytes:
    import zlib

    try:
        data = zlib.decompress(blob)  # harness.store._transcript: UTF-8 JSON, one line
    except zlib.error:
        return redact.data(blob)
    # As text, not bytes: a head or tail a cut or a split left of a key ends or starts one of
    # its JSON strings (a message's reasoning, its content), which only :meth:`Redactor.text`
    # looks for.
    text = data.decode("utf-8", "surrogateescape")
    clean = redact.text(text)
    return blob if clean is text else zlib.compress(clean.encode("utf-8", "surrogateescape"), 6)


def scrub_summary(summary: MatrixSummary, redact: Redactor) -> None:
    """The summary's lines (errors, drift notes) as the caller prints them: scrubbed."""
    if redact:
        summary.errors[:] = [redact.text(line) for line in summary.errors]
        summary.drifted[:] = [redact.text(line) for line in summary.drifted]
