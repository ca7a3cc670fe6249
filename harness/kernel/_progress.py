"""No-progress detection (the default productivity check of ``ExAthena.Loop``, HEAD semantics).

After each continued iteration the kernel computes a fingerprint of the iteration's tool activity:
the sorted ``(tool name, canonical JSON arguments)`` pairs plus a hash of the tool results' contents
(so re-running a command whose output changes counts as progress). The iteration is productive when
the fingerprint differs from the previous one, or the model wrote new non-blank text that differs
from its previous text. ``max_unproductive_iterations`` unproductive iterations in a row end the
run with ``error_no_progress``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from harness.core._messages import Message

__all__ = [
    "Fingerprint",
    "ProgressSnapshot",
    "default_productivity_signal",
    "fingerprint",
    "normalise_output",
    "strict_productivity_signal",
]

Fingerprint = tuple[tuple[tuple[str, str], ...], str]


@dataclass(slots=True)
class ProgressSnapshot:
    """What a productivity signal may compare against: the state before the iteration.

    (Not frozen only because it is built every iteration and frozen dataclasses are slower to
    build; treat it as read-only.)"""

    message_count: int
    last_fingerprint: Fingerprint | None
    last_assistant_text: str
    iterations: int
    tool_calls_made: int


_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
)


_UNIT = r"(?:ns|us|\u00b5s|ms|s|secs?|seconds?|mins?|minutes?|h|hours?)"
# Each alternative is replaced by its placeholder; order matters (first match wins at a spot).
_VOLATILE: tuple[tuple[str, str], ...] = (
    # Temporary paths: /tmp/..., /var/tmp/..., macOS /var/folders/... (up to a space, quote,
    # colon, comma or bracket, so "path:12:" keeps its line number).
    (r"(?:/private)?/(?:tmp|var/tmp|var/folders)/[^\s'\"`:,()\[\]<>]*", "<tmp>"),
    (r"\btmp[A-Za-z0-9_]{6,}", "<tmp>"),
    # ISO-8601 date-times, then clock times (HH:MM:SS[.fff]).
    (
        r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?",
        "<time>",
    ),
    (r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b", "<time>"),
    # Durations: 0m1.234s (time), a decimal with a unit (0.08s, 1.5 ms), whole ms/us/ns (12ms),
    # and a whole number of seconds/minutes after a timing word (in 3s, took 2 seconds).
    (r"\b\d+m\d+(?:\.\d+)?s\b", "<dur>"),
    (rf"\b\d+\.\d+ ?{_UNIT}(?![A-Za-z])", "<dur>"),
    (r"\b\d+ ?(?:ns|us|\u00b5s|ms)(?![A-Za-z])", "<dur>"),
    (
        rf"(?i)\b(in|took|after|elapsed|duration|time)(:?\s+)\d+ ?{_UNIT}(?![A-Za-z])",
        "\\1\\2<dur>",
    ),
    # Process ids: "pid 1234", "PID: 1234", "pid=1234", "process 1234".
    # (Possessive: with ``\s*[:=#]?\s*`` each split of a run of spaces was tried, quadratic:
    # a tool result of "pid" and 30,000 spaces, a model's tool name, held a run 7 s.)
    (r"(?i)\b(pid|process)(\s*+[:=#]?+\s*+)\d+\b", "\\1\\2<pid>"),
    # Object addresses in reprs (<Foo object at 0x7f3a2c...>).
    (r"\b0x[0-9a-fA-F]{6,}\b", "<addr>"),
)
_PATTERNS = tuple((re.compile(p), r) for p, r in _VOLATILE)
_MAYBE_VOLATILE = re.compile(r"\d|tmp|/var/")


def normalise_output(text: str) -> str:
    """``text`` with the parts that vary from run to run by themselves replaced by placeholders
    (``<dur>``, ``<time>``, ``<pid>``, ``<tmp>``, ``<addr>``); see the module docs. Used only
    for the no-progress fingerprint."""
    if not _MAYBE_VOLATILE.search(text):
        return text
    for pattern, repl in _PATTERNS:
        text = pattern.sub(repl, text)
    return text


def fingerprint(new_messages: Sequence[Message]) -> Fingerprint:
    """Fingerprint of one iteration's new messages."""
    calls: list[tuple[str, str]] = []
    results: list[str] = []
    encode = _CANONICAL.encode
    for m in new_messages:
        if m.tool_calls:
            for c in m.tool_calls:
                calls.append((c.name, encode(c.arguments)))
        elif m.tool_result is not None:
            results.append(normalise_output(m.tool_result.content))
    calls.sort()
    blob = "\x00".join(results).encode("utf-8", "surrogatepass")
    return (tuple(calls), hashlib.blake2b(blob, digest_size=8).hexdigest())


def last_assistant_text(messages: Sequence[Message]) -> str:
    for m in reversed(messages):
        if m.role == "assistant":
            return m.content.strip()
    return ""


def default_productivity_signal(
    prev: ProgressSnapshot, new_messages: Sequence[Message], current: Fingerprint
) -> bool:
    """The kernel default: productive iff the fingerprint changed or any new assistant text."""
    if current != prev.last_fingerprint:
        return True
    return any(m.role == "assistant" and m.content for m in new_messages)


def strict_productivity_signal(
    prev: ProgressSnapshot, new_messages: Sequence[Message], current: Fingerprint
) -> bool:
    """ReAct's check: the fingerprint changed, or there is new non-blank text that differs from
    the previous assistant text (repeating yourself is not progress)."""
    if current != prev.last_fingerprint:
        return True
    prev_text = prev.last_assistant_text
    for m in new_messages:
        if m.role == "assistant":
            text = m.content.strip()
            if text and text != prev_text:
                return True
    return False
