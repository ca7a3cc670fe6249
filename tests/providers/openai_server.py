"""A tiny raw-socket HTTP server on 127.0.0.1 for faults pytest-httpserver cannot produce: a
connection reset, a server that never answers, a chunked SSE stream broken off mid-way.

It runs in a background thread, serves until stopped (the context manager stops it) and never
longer than ``lifetime_s``, so a failing test cannot leave it behind.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

Fault = Literal["reset", "hang", "truncated_chunked"]


class FaultServer:
    """Accepts connections and misbehaves as ``fault`` says, for each of them."""

    def __init__(self, fault: Fault, *, body: bytes = b"", lifetime_s: float = 10.0) -> None:
        self.fault = fault
        self.body = body
        self.lifetime_s = lifetime_s
        self.requests: list[bytes] = []
        self._stop = threading.Event()
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(8)
        self._sock.settimeout(0.05)
        self.port: int = self._sock.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, name=f"fault-{fault}", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FaultServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._sock.close()

    def _serve(self) -> None:
        deadline = time.monotonic() + self.lifetime_s
        while not self._stop.is_set() and time.monotonic() < deadline:
            try:
                conn, _ = self._sock.accept()
            except (TimeoutError, OSError):
                continue
            threading.Thread(target=self._handle, args=(conn, deadline), daemon=True).start()

    def _handle(self, conn: socket.socket, deadline: float) -> None:
        try:
            conn.settimeout(2.0)
            self.requests.append(_read_request(conn))
            if self.fault == "reset":
                # SO_LINGER with a zero timeout: close() sends RST instead of FIN.
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            elif self.fault == "hang":
                while not self._stop.is_set() and time.monotonic() < deadline:
                    self._stop.wait(0.05)
            elif self.fault == "truncated_chunked":
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                    b"transfer-encoding: chunked\r\n\r\n"
                )
                conn.sendall(b"%x\r\n%s\r\n" % (len(self.body), self.body))
                # ...and the connection is closed: no terminating zero-length chunk.
        except OSError:
            pass
        finally:
            conn.close()


def _read_request(conn: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        piece = conn.recv(65536)
        if not piece:
            return data
        data += piece
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        piece = conn.recv(65536)
        if not piece:
            break
        body += piece
    return head + b"\r\n\r\n" + body


@contextmanager
def fault_server(fault: Fault, *, body: bytes = b"") -> Iterator[FaultServer]:
    server = FaultServer(fault, body=body).start()
    try:
        yield server
    finally:
        server.stop()
