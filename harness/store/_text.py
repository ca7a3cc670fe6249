"""Text whatever its code points: what no UTF-8 encoder accepts is replaced, never raised.

A model may reply with a lone surrogate (``"done \\ud83d"``), and ``os`` gives a file name with a
byte that is not UTF-8 as a surrogate (``surrogateescape``: byte ``\\xff`` is ``"\\udcff"``).
Neither can be encoded as UTF-8, so storing them raised ``UnicodeEncodeError`` and one cell's text
crashed the whole run. :func:`utf8` encodes any ``str``, every lone surrogate replaced by U+FFFD
(a replacement that is valid inside JSON text too, so encoded JSON columns stay JSON; the file
tools already show an undecodable byte of a name as the text ``\\xNN``). The fast path (valid
text) costs one ``encode``.
"""

from __future__ import annotations

import re

__all__ = ["clean_text", "utf8"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """``text`` with every lone surrogate replaced (the same object when there is none)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def utf8(text: str) -> bytes:
    """``text`` as UTF-8, lone surrogates replaced as in :func:`clean_text`."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text).encode("utf-8")
