"""Untrusted text (model replies, provider errors, tool, suite and file names) made safe to show:
every character that could drive a terminal or reorder what a reader sees is written as an escape
(``\\x1b``, ``\\u202e``) instead. One function for every place that shows such text: ``harness
traces show``, the CLI's output, and the reports.

What is escaped: C0 control characters (ESC sequences recolour, clear the screen, move the
cursor, retitle the window or hide text; NUL and CR overwrite), DEL and C1 (``\\x9b`` is a
one-byte CSI), the bidirectional embeddings, overrides and isolates (``U+202A``-``U+202E``,
``U+2066``-``U+2069``: text that reads differently from what it is), the direction marks
(``U+200E``, ``U+200F``), the line and paragraph separators (``U+2028``, ``U+2029``: a line break
to some readers, none to others), and lone surrogates (no encoder takes them). ``keep`` names
characters left as they are (``"\\n\\t"`` for a block of several lines).
"""

from __future__ import annotations

import re

__all__ = ["escape_controls"]

_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def _escape_char(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_controls(text: str, keep: str = "") -> str:
    """``text`` with every unsafe character written as its escape (``\\x1b``, ``\\u202e``),
    except those in ``keep``; the same object when there is none."""
    if not _UNSAFE.search(text):
        return text
    if not keep:
        return _UNSAFE.sub(_escape_char, text)
    return _UNSAFE.sub(lambda m: m.group() if m.group() in keep else _escape_char(m), text)
