"""Web addresses as messages and files show them, without what may be a secret in them.

A ``base_url`` can carry a password (``http://user:PASS@host/v1``), a token given as the user
(``http://TOKEN@host/v1``) or a key in its query (``?key=...``). Round 17 (part B) masked
``user:PASS@`` in the provider's messages with a pattern that stopped at the first ``@``: a
password holding one (``p@ss``, which httpx reads whole: it splits at the last ``@``) showed
its end, and a token as the user, a key in the query, an address refused as unusable, and the
``uri`` of every recorded cassette showed all of it (adversary round 18, part B).

This module is a leaf: it imports nothing of harness.
"""

from __future__ import annotations

import re

__all__ = ["MASK", "masked_text", "masked_url", "without_password"]

#: What stands for a masked part.
MASK = "***"

_START = re.compile(r"^(?:[a-z][a-z0-9+.-]*:)?//", re.IGNORECASE)


def _parts(url: str, anywhere: bool = False) -> tuple[str, str, str, str]:
    """``(start, user information, the rest of the address before its query, the query and
    fragment)``. The user information is what stands before the last ``@`` of the host part
    (httpx's reading), '' when there is none; ``anywhere``: before the last ``@`` ahead of
    the query (an address httpx refused: ``u:PASS/x@host`` has an unencoded ``/``)."""
    start = _START.match(url)
    head = url[: start.end()] if start else ""
    body, mark, tail = url[len(head) :].partition("?")
    if not mark:
        body, mark, tail = body.partition("#")
    host, slash, path = (body, "", "") if anywhere else body.partition("/")
    user, at, rest = host.rpartition("@")
    if not at:
        return head, "", body, f"{mark}{tail}"
    return head, user, f"{rest}{slash}{path}", f"{mark}{tail}"


def masked_url(url: str, mask: str = MASK, *, anywhere: bool = False) -> str:
    """``url`` with its password masked (``http://u:***@host``; all of the user information
    when it has no ``:``, a token given as the user), and each value of its query."""
    head, user, rest, tail = _parts(url, anywhere)
    if user:
        name, colon, _ = user.partition(":")
        rest = f"{name}:{mask}@{rest}" if colon else f"{mask}@{rest}"
    if tail.startswith("?"):
        query, hash_, fragment = tail[1:].partition("#")
        pairs = (p.partition("=") for p in query.split("&"))
        query = "&".join(f"{k}={mask}" if eq and v else f"{k}{eq}" for k, eq, v in pairs)
        tail = f"?{query}{hash_}{fragment}"
    return f"{head}{rest}{tail}"


def without_password(url: str, mask: str = MASK) -> str:
    """``url`` with only its user information masked (the query left whole)."""
    head, user, rest, tail = _parts(url)
    if not user:
        return url
    name, colon, _ = user.partition(":")
    return f"{head}{name}:{mask}@{rest}{tail}" if colon else f"{head}{mask}@{rest}{tail}"


def masked_text(text: str, url: str) -> str:
    """``text`` (a message about ``url``) with ``url`` shown masked, and each piece of what
    :func:`masked_url` hides that the message repeats (httpx's ``Invalid port: 'PASS'`` for
    an unencoded ``/`` in a password) masked too."""
    _, user, _, tail = _parts(url, anywhere=True)
    secret = user.partition(":")[2] or (user if ":" not in user else "")
    pieces = re.split(r"[/:@?#&=]", secret)
    if tail.startswith("?"):
        pieces += [p.partition("=")[2] for p in tail[1:].partition("#")[0].split("&")]
    text = text.replace(url, masked_url(url, anywhere=True))
    for piece in sorted({p for p in pieces if len(p) >= 3}, key=len, reverse=True):
        text = text.replace(piece, MASK)
    return text
