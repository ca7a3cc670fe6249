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
from urllib.parse import quote, unquote

__all__ = ["MASK", "canonical_path", "masked_text", "masked_url", "without_password"]

#: What stands for a masked part.
MASK = "***"

_START = re.compile(r"^(?:[a-z][a-z0-9+.-]*:)?//", re.IGNORECASE)


def _parts(url: str, anywhere: bool = False) -> tuple[str, str, str, str]:
    """``(start, user information, the rest of the address before its query, the query and
    fragment)``. The user information is what stands before the last ``@`` of the host part
    (httpx's reading), '' when there is none; ``anywhere``: before the last ``@`` of the whole
    address (one httpx refused: ``u:PASS/x@host``, ``u:PA?SS@host`` and ``u:PA#SS@host`` hold
    an unencoded ``/``, ``?`` or ``#``; adversary round 19, part B)."""
    start = _START.match(url)
    head = url[: start.end()] if start else ""
    user, at, after = url[len(head) :].rpartition("@") if anywhere else ("", "", "")
    body, mark, tail = (after if at else url[len(head) :]).partition("?")
    if not mark:
        body, mark, tail = body.partition("#")
    if at:
        return head, user, body, f"{mark}{tail}"
    host, slash, path = body.partition("/")
    user, at, rest = host.rpartition("@")
    if not at:
        return head, "", body, f"{mark}{tail}"
    return head, user, f"{rest}{slash}{path}", f"{mark}{tail}"


def _hidden(user: str, mask: str) -> str:
    """The user information as shown: ``name:***`` (a password), ``***`` (a token given as
    the user; ``TOKEN:`` too, with an empty password, as httpx sends it)."""
    name, colon, password = user.partition(":")
    return f"{name}:{mask}" if colon and password else mask


def masked_url(url: str, mask: str = MASK, *, anywhere: bool = False) -> str:
    """``url`` with its password masked (``http://u:***@host``; all of the user information
    when it has no ``:``, a token given as the user), and each value of its query."""
    head, user, rest, tail = _parts(url, anywhere)
    if user:
        rest = f"{_hidden(user, mask)}@{rest}"
    if tail.startswith("?"):
        query, hash_, fragment = tail[1:].partition("#")
        pairs = (p.partition("=") for p in query.split("&"))
        query = "&".join(f"{k}={mask}" if eq and v else f"{k}{eq}" for k, eq, v in pairs)
        tail = f"?{query}{hash_}{fragment}"
    return f"{head}{rest}{tail}"


def without_password(url: str, mask: str = MASK) -> str:
    """``url`` with only its user information masked (the query left whole)."""
    head, user, rest, tail = _parts(url)
    return f"{head}{_hidden(user, mask)}@{rest}{tail}" if user else url


def masked_text(text: str, url: str) -> str:
    """``text`` (a message about ``url``) with ``url`` shown masked, and each piece of what
    :func:`masked_url` hides that the message repeats (httpx's ``Invalid port: 'PASS'`` for
    an unencoded ``/`` in a password) masked too; as they are, and as ``repr`` and ``ascii``
    write them (``{url!a}``: a password with ``ä`` was shown ``p\\xe4ss...``)."""
    _, user, _, tail = _parts(url, anywhere=True)
    password = user.partition(":")[2]
    pieces = re.split(r"[/:@?#&=]", password or user)
    if tail.startswith("?"):
        pieces += [p.partition("=")[2] for p in tail[1:].partition("#")[0].split("&")]
    hidden = [(url, masked_url(url, anywhere=True)), *((p, MASK) for p in _long(pieces))]
    for whole, shown in hidden:
        for form, masked in _forms(whole, shown):
            text = text.replace(form, masked)
    return text


def _long(pieces: list[str]) -> list[str]:
    return sorted({p for p in pieces if len(p) >= 3}, key=len, reverse=True)


def _forms(text: str, masked: str) -> list[tuple[str, str]]:
    """``text`` and its forms inside ``repr`` and ``ascii``, each with ``masked``'s."""
    return [(text, masked), (repr(text)[1:-1], repr(masked)[1:-1]),
            (ascii(text)[1:-1], ascii(masked)[1:-1])]  # fmt: skip


def canonical_path(uri: str) -> str:
    """``uri`` with its path spelt as ``quote(..., safe="/")`` spells it: each character but
    ``/`` and the unreserved ones percent-encoded, in upper case (an encoded ``/`` or ``%``
    stays encoded). A token in a gateway's path encoded only where a path must encode it
    (``/ab%2Fcd+ef==.../v1``) is then spelt as the cassettes' redactor looks for it: it was
    stored whole in every cassette's ``uri`` (adversary round 21, part A)."""
    head, sep, rest = uri.partition("://")
    host, slash, after = rest.partition("/")
    if not (sep and slash):
        return uri
    cut = min((i for i in (after.find("?"), after.find("#")) if i >= 0), default=len(after))
    pieces = re.split(r"(%2[fF]|%25)", after[:cut])
    path = "".join(
        piece.upper()
        if n % 2
        else quote(unquote(piece, errors="surrogateescape"), safe="/", errors="surrogateescape")
        for n, piece in enumerate(pieces)
    )
    return f"{head}{sep}{host}/{path}{after[cut:]}"
