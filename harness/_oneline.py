"""Messages on one line of bounded length, for the one-line errors the CLI and the library print
(DuckDB's own texts run over several lines, and a plug-in's or a database's message can be
megabytes long): :func:`flat` for a text, :func:`one_line` for an exception's."""

from __future__ import annotations

__all__ = ["LINE_LIMIT", "cut", "flat", "one_line"]

#: The most characters of a message :func:`flat` keeps.
LINE_LIMIT = 2000


def flat(text: str, limit: int = LINE_LIMIT) -> str:
    """``text`` with its whitespace runs made single spaces, cut to ``limit`` characters (saying
    how many were left out)."""
    return cut(" ".join(text.split()), limit)


def cut(text: str, limit: int = LINE_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, saying how many were left out."""
    if len(text) > limit:
        text = f"{text[:limit]}... ({len(text) - limit} characters more)"
    return text


def one_line(exc: BaseException, limit: int = LINE_LIMIT) -> str:
    """:func:`flat` of ``str(exc)``; the type's name when the message is empty. Never raises:
    an exception whose ``__str__`` raises is named by its type."""
    try:
        text = str(exc)
    except Exception:
        return f"{type(exc).__name__} (its message could not be read)"
    return flat(text, limit) or type(exc).__name__
