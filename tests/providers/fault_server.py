"""A tiny raw-socket HTTP/1.1 server on 127.0.0.1 for the faults pytest-httpserver cannot
produce: a connection reset, a server that never answers, a body broken off mid-way, a stream
that stalls after its headers.

Each accepted connection reads one request and then plays the next :class:`Fault` of the script
(the last one repeats). The server runs in a background thread, stops when its context manager
exits and never lives longer than ``lifetime_s``, so a failing test cannot leave it behind::

    with FaultServer([Fault.reset(), Fault.raw(ok_response)]) as server:
        ... provider_opts={"base_url": server.url} ...
    assert len(server.requests) == 2

:class:`Script` is the companion for pytest-httpserver: a handler that serves a list of
responses in order and records what it received.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
import zlib
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal

from werkzeug import Request, Response

__all__ = ["CHAT_REPLY", "Fault", "FaultServer", "Script", "chunked", "gzipped", "http_response"]

#: The smallest OpenAI chat completion: the assistant says "hello".
CHAT_REPLY: dict[str, Any] = {
    "id": "x",
    "object": "chat.completion",
    "model": "m",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "hello"}, "finish_reason": "stop"}
    ],
}


class Script:
    """A pytest-httpserver handler: answers with ``responses`` in order (the last one repeats)
    and keeps every request's JSON body and headers."""

    def __init__(self, responses: list[Response]) -> None:
        self.responses = responses
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()

    def __call__(self, request: Request) -> Response:
        with self._lock:
            index = len(self.bodies)
            self.bodies.append(json.loads(request.get_data()))
            self.headers.append({k.lower(): v for k, v in request.headers.items()})
        return self.responses[min(index, len(self.responses) - 1)]


@dataclass(frozen=True, slots=True)
class Fault:
    """What to do with one connection after reading its request.

    - ``reset``: close with a TCP RST (SO_LINGER 0), nothing sent;
    - ``hang``: send ``data`` (possibly nothing), then keep the connection open, silent;
    - ``raw``: send ``data`` and close normally (a complete or a truncated response);
    - ``drip``: send ``data``, then ``beat`` every ``every_s`` seconds, never ending (a
      gateway's keep-alive comments while its upstream hangs, a slow-loris body).
    """

    action: Literal["reset", "hang", "raw", "drip"]
    data: bytes = b""
    beat: bytes = b""
    every_s: float = 0.1

    @classmethod
    def reset(cls) -> Fault:
        return cls("reset")

    @classmethod
    def hang(cls, data: bytes = b"") -> Fault:
        return cls("hang", data)

    @classmethod
    def raw(cls, data: bytes) -> Fault:
        return cls("raw", data)

    @classmethod
    def drip(cls, data: bytes, beat: bytes, every_s: float = 0.1) -> Fault:
        return cls("drip", data, beat, every_s)


def http_response(
    status: int,
    body: bytes | str | dict[str, Any],
    *,
    content_type: str = "application/json",
    headers: dict[str, str] | None = None,
    reason: str = "",
) -> bytes:
    """A complete HTTP/1.1 response with a Content-Length."""
    if isinstance(body, dict):
        body = json.dumps(body)
    data = body.encode() if isinstance(body, str) else body
    lines = [
        f"HTTP/1.1 {status} {reason or 'Status'}",
        f"Content-Type: {content_type}",
        f"Content-Length: {len(data)}",
        "Connection: close",
        *(f"{k}: {v}" for k, v in (headers or {}).items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


def gzipped(*chunks: bytes) -> bytes:
    """``chunks`` as one gzip stream (compressed one at a time: a bomb need not be in memory)."""
    c = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    return b"".join([*(c.compress(chunk) for chunk in chunks), c.flush()])


def chunked(content_type: str, *chunks: bytes | str, complete: bool = True) -> bytes:
    """A 200 response with a chunked body; ``complete=False`` leaves out the final zero-length
    chunk, so the body is cut off as a dropped connection cuts it."""
    head = (
        "HTTP/1.1 200 OK\r\n"
        f"Content-Type: {content_type}\r\n"
        "Transfer-Encoding: chunked\r\n"
        "Connection: close\r\n\r\n"
    ).encode()
    body = b""
    for chunk in chunks:
        data = chunk.encode() if isinstance(chunk, str) else chunk
        body += f"{len(data):x}\r\n".encode() + data + b"\r\n"
    if complete:
        body += b"0\r\n\r\n"
    return head + body


class FaultServer:
    """Serves ``script`` one fault per connection; records each request's body (bytes)."""

    def __init__(self, script: list[Fault], *, lifetime_s: float = 10.0) -> None:
        if not script:
            raise ValueError("FaultServer needs at least one fault")
        self.script = list(script)
        self.lifetime_s = lifetime_s
        self.requests: list[bytes] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._handlers: list[threading.Thread] = []
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self._sock.settimeout(0.05)
        self.port: int = self._sock.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, name="fault-server", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def bodies(self) -> list[dict[str, Any]]:
        """The JSON bodies of the requests received so far."""
        with self._lock:
            return [json.loads(r) for r in self.requests]

    def __enter__(self) -> FaultServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        for handler in self._handlers:
            handler.join(timeout=5)
        self._sock.close()

    def _serve(self) -> None:
        deadline = time.monotonic() + self.lifetime_s
        count = 0
        while not self._stop.is_set() and time.monotonic() < deadline:
            try:
                conn, _ = self._sock.accept()
            except (TimeoutError, OSError):
                continue
            fault = self.script[min(count, len(self.script) - 1)]
            count += 1
            handler = threading.Thread(
                target=self._handle, args=(conn, fault, deadline), daemon=True
            )
            self._handlers.append(handler)
            handler.start()
        self._stop.set()  # past the lifetime: release hanging connections too

    def _handle(self, conn: socket.socket, fault: Fault, deadline: float) -> None:
        try:
            conn.settimeout(2.0)
            body = _read_request(conn)
            if body is None:
                return
            with self._lock:
                self.requests.append(body)
            if fault.action == "reset":
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                return
            if fault.data:
                conn.sendall(fault.data)
            if fault.action == "hang":
                while not self._stop.is_set() and time.monotonic() < deadline:
                    self._stop.wait(0.05)
            if fault.action == "drip":
                while not self._stop.is_set() and time.monotonic() < deadline:
                    conn.sendall(fault.beat)
                    self._stop.wait(fault.every_s)
        except OSError:
            pass
        finally:
            conn.close()


def _read_request(conn: socket.socket) -> bytes | None:
    """Read one request (headers and a Content-Length body); None if the client went away."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return body
