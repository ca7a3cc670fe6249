"""Log records scrubbed of secrets while a ``Redactor.scrubbing_logs()`` block is on
(:class:`harness.cassettes._secrets.Redactor`): a log record factory, installed while one is
active, replaces every secret in the message and in the traceback text of each record as it is
made."""

from __future__ import annotations

import logging
import threading
import traceback
from collections.abc import Sequence
from typing import Any, Protocol

__all__ = ["LOGS", "TextScrubber"]


class TextScrubber(Protocol):
    """What a log record is scrubbed with: :class:`~harness.cassettes._secrets.Redactor`."""

    def text(self, text: str) -> str:
        """``text`` with every secret replaced (the same object when it had none)."""
        ...


class _LogScrubbing:
    """The active redactors of ``Redactor.scrubbing_logs``, applied by a log record
    factory installed while there is one (and removed after, unless someone installed another
    factory over it meanwhile)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._active: list[TextScrubber] = []
        self._previous: Any = None
        self._factory: Any = None

    def add(self, redactor: TextScrubber) -> None:
        with self._lock:
            self._active.append(redactor)
            if self._factory is None:
                previous = self._previous = logging.getLogRecordFactory()

                def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
                    record = previous(*args, **kwargs)
                    active = self._active
                    if active:
                        _scrub_record(record, tuple(active))
                    return record

                self._factory = factory
                logging.setLogRecordFactory(factory)

    def remove(self, redactor: TextScrubber) -> None:
        with self._lock:
            self._active.remove(redactor)
            # (when another factory wraps ours, ours stays, inert while nothing is active)
            if (
                not self._active
                and self._factory is not None
                and logging.getLogRecordFactory() is self._factory
            ):
                logging.setLogRecordFactory(self._previous)
                self._factory = self._previous = None


LOGS = _LogScrubbing()


def _scrub_record(record: logging.LogRecord, redactors: Sequence[TextScrubber]) -> None:
    try:
        message = record.getMessage()
    except Exception:  # a broken format: logging reports it when the record is shown
        return
    clean = message
    for r in redactors:
        clean = r.text(clean)
    if clean is not message:
        record.msg, record.args = clean, None
    exc = record.exc_info
    if exc and exc[1] is not None:
        text = "".join(traceback.format_exception(*exc)).rstrip("\n")
        clean = text
        for r in redactors:
            clean = r.text(clean)
        if clean is not text:  # handlers then print this text instead of formatting exc_info
            record.exc_info, record.exc_text = None, clean
