"""Which ``Host`` headers the viewer answers, and which addresses count as this machine only.

The viewer has no login; it is safe on a loopback address only as long as a web page elsewhere
cannot reach it. DNS rebinding does exactly that: a page on ``evil.example`` re-points its own
name at 127.0.0.1 and its scripts then read the viewer, with ``Host: evil.example``. So every
request must name the viewer by a loopback name (``127.0.0.1``, ``localhost``, ``[::1]``), the
address it was bound to, or a name given with ``--allow-host``; anything else gets 400.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

__all__ = ["LOOPBACK_HOSTS", "HostCheck", "host_name", "is_loopback"]

#: Host names every viewer answers to.
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Any]


def host_name(header: str) -> str:
    """The name part of a ``Host`` header (port dropped, lower case; ``[::1]`` kept bracketed)."""
    header = header.strip().lower()
    if header.startswith("["):
        end = header.find("]")
        return header[: end + 1] if end > 0 else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def is_loopback(host: str) -> bool:
    """Whether binding to ``host`` keeps the viewer on this machine."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _bracket(host: str) -> str:
    try:
        bare = host.strip("[]")
        return f"[{bare}]" if ipaddress.ip_address(bare).version == 6 else host
    except ValueError:
        return host


class HostCheck:
    """ASGI middleware answering 400 to a request whose ``Host`` is not allowed."""

    def __init__(self, app: ASGIApp, allowed: Iterable[str]) -> None:
        self.app = app
        self.allowed = frozenset(
            host_name(_bracket(h)) for h in (*LOOPBACK_HOSTS, *allowed) if h
        ) - {"0.0.0.0", "[::]"}  # a wildcard bind address is not a name anyone asks for

    async def __call__(
        self,
        scope: Scope,
        receive: Callable[[], Awaitable[Any]],
        send: Callable[[Any], Awaitable[None]],
    ) -> None:
        if scope["type"] in ("http", "websocket"):
            headers = dict(scope.get("headers") or [])
            raw = headers.get(b"host", b"").decode("latin-1")
            if host_name(raw) not in self.allowed:
                body = (
                    f"400 Bad Request: Host {raw!r} is not allowed; the viewer answers to "
                    f"{', '.join(sorted(self.allowed))} (add names with --allow-host)\n"
                ).encode()
                await send({"type": "http.response.start", "status": 400,
                            "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                        (b"content-length", str(len(body)).encode())]})  # fmt: skip
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
