"""A loopback OpenAI-compatible server that "generates" one token every ``tick_s`` and, like
llama-server, stops generating as soon as its client has gone away.

Each connection is served by its own thread: the request is read, then tokens are produced one
per tick up to ``max_tokens``. Before each token the server looks at the socket the way
llama-server's HTTP library does (readable, and a peek reads nothing: the peer closed it); a
streaming request also writes each token as an SSE chunk, and a failed write is a disconnect
too. Whether streamed or not, what it saw is kept per request: tokens generated, and whether and
when it saw the client go::

    with GeneratingServer(tick_s=0.05) as server:
        ... base_url = server.url ...
    server.requests[0].disconnected_at
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from dataclasses import dataclass, field
from types import TracebackType

__all__ = ["GeneratingServer", "Generation"]


@dataclass(slots=True)
class Generation:
    """One request as the server saw it."""

    body: dict[str, object]
    tokens: int = 0
    #: ``time.monotonic()`` when the server saw the client gone (None: it never went).
    disconnected_at: float | None = None
    #: Set when the server stopped serving the request (finished or saw the client go).
    done: threading.Event = field(default_factory=threading.Event)

    @property
    def streamed(self) -> bool:
        return bool(self.body.get("stream"))


def _read_request(conn: socket.socket) -> dict[str, object]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            raise ConnectionError("closed before the headers")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(rest) < length:
        chunk = conn.recv(65536)
        if not chunk:
            raise ConnectionError("closed mid-body")
        rest += chunk
    parsed: dict[str, object] = json.loads(rest[:length])
    return parsed


def _gone(conn: socket.socket) -> bool:
    """The client closed its end (what cpp-httplib's ``is_socket_alive`` checks)."""
    readable, _, _ = select.select([conn], [], [], 0)
    if not readable:
        return False
    try:
        return conn.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


class GeneratingServer:
    def __init__(self, *, tick_s: float = 0.05, max_tokens: int = 400) -> None:
        self.tick_s = tick_s
        self.max_tokens = max_tokens
        self.requests: list[Generation] = []
        self.started = threading.Event()  # set when the first token of any request was made
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.2)
        self._closing = threading.Event()
        self._threads: list[threading.Thread] = []
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}/v1"

    def __enter__(self) -> GeneratingServer:
        thread = threading.Thread(target=self._accept, daemon=True)
        thread.start()
        self._threads.append(thread)
        return self

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._closing.set()
        for thread in list(self._threads):
            thread.join(timeout=10)
        self._sock.close()

    def _accept(self) -> None:
        while not self._closing.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            thread.start()
            self._threads.append(thread)

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                body = _read_request(conn)
            except (ConnectionError, ValueError):
                return
            gen = Generation(body)
            self.requests.append(gen)
            try:
                self._generate(conn, gen)
            finally:
                gen.done.set()

    def _generate(self, conn: socket.socket, gen: Generation) -> None:
        limit = min(int(str(gen.body.get("max_tokens") or self.max_tokens)), self.max_tokens)
        if gen.streamed:
            conn.sendall(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                b"cache-control: no-cache\r\nconnection: close\r\n\r\n"
            )
        while gen.tokens < limit and not self._closing.is_set():
            if _gone(conn):
                gen.disconnected_at = time.monotonic()
                return
            time.sleep(self.tick_s)  # the model computing one token
            gen.tokens += 1
            self.started.set()
            if gen.streamed:
                delta = {"choices": [{"index": 0, "delta": {"content": f"{gen.tokens} "}}]}
                try:
                    conn.sendall(f"data: {json.dumps(delta)}\n\n".encode())
                except OSError:
                    gen.disconnected_at = time.monotonic()
                    return
        text = " ".join(str(i) for i in range(1, gen.tokens + 1))
        usage = {"prompt_tokens": 10, "completion_tokens": gen.tokens}
        try:
            if gen.streamed:
                end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}
                conn.sendall(f"data: {json.dumps({**end, 'usage': usage})}\n\n".encode())
                conn.sendall(b"data: [DONE]\n\n")
                return
            reply = json.dumps(
                {
                    "id": "gen",
                    "object": "chat.completion",
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text},
                            "finish_reason": "length",
                        }
                    ],
                    "usage": {**usage, "total_tokens": 10 + gen.tokens},
                }
            ).encode()
            conn.sendall(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n"
                + f"content-length: {len(reply)}\r\n\r\n".encode()
                + reply
            )
        except OSError:
            gen.disconnected_at = time.monotonic()
