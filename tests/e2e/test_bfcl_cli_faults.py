"""A model that makes BFCL's MathAPI compute for minutes stalls neither the run nor Ctrl-C (issue
34, faults round 5, item 2).

A loopback OpenAI-compatible server plays the model for three BFCL multi-turn entries run by
``harness run``: in one, the model calls ``pwd`` then ``power(base=3, exponent=10**9)``
(about 35 s of one core); the other two answer each turn in text, starting only once that call
has begun. Before, the call ran on the event loop: no other cell sent a request until it was
over, and the process exited 35 s after SIGINT. Now the call runs in a killable worker.

The run records (``--record-mode all``), and recording runs one cell per HTTP provider at a time
unless ``--provider-concurrency`` says otherwise: without it the other cells never ran beside
the slow one at all; they started once it was done and graded (its grading re-ran the call to
its 60 s limit, holding the provider's one slot: the 61-64 s first seen here, see
``tests/bench/test_runner_slots.py``). So that run asks for three cells at once.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "bfcl_eval",
    reason="bfcl-eval is not installed (pip install --no-deps bfcl-eval==2026.3.23 mpmath)",
)
pytest.importorskip(
    "mpmath", reason="mpmath is not installed (pip install --no-deps bfcl-eval==2026.3.23 mpmath)"
)

from harness.suites import _bfcl_data as data
from harness.suites._bfcl_tools import CALL_TIME_LIMIT_S

#: Spawns processes, sandboxes, browsers, clusters or servers (the fast loop skips it).
pytestmark = pytest.mark.slow

SLOW_ID, OTHER_IDS = "multi_turn_base_15", ("multi_turn_base_28", "multi_turn_base_31")
SUITE = f"""\
suite: bfcl-slow
source:
  kind: bfcl
  categories: [multi_turn_base]
  ids: [{SLOW_ID}, {", ".join(OTHER_IDS)}]
"""


@dataclass
class Seen:
    """What the server saw: (time, entry id, request number of that entry, body)."""

    requests: list[tuple[float, str, int, dict[str, Any]]] = field(default_factory=list)
    slow_sent: float | None = None
    slow_started: threading.Event = field(default_factory=threading.Event)


def _first_prompts() -> dict[str, str]:
    return {i: data.entry(i).question[0][-1]["content"] for i in (SLOW_ID, *OTHER_IDS)}


def _reply(content: str | None, calls: list[tuple[str, dict[str, Any]]], stream: bool) -> bytes:
    tool_calls = [
        {"id": f"call_{n}", "type": "function",
         "function": {"name": name, "arguments": json.dumps(args)}}
        for n, (name, args) in enumerate(calls)
    ]  # fmt: skip
    finish = "tool_calls" if calls else "stop"
    usage = {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8}
    if not stream:
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if tool_calls:
            message["tool_calls"] = tool_calls
        return json.dumps({"id": "r", "object": "chat.completion", "model": "m", "usage": usage,
                           "choices": [{"index": 0, "finish_reason": finish,
                                        "message": message}]}).encode()  # fmt: skip
    delta: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        delta["tool_calls"] = [dict(c, index=n) for n, c in enumerate(tool_calls)]
    chunk = {"id": "r", "object": "chat.completion.chunk", "model": "m", "usage": usage,
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip
    return b"data: " + json.dumps(chunk).encode() + b"\n\ndata: [DONE]\n\n"


def _provider(seen: Seen) -> type[BaseHTTPRequestHandler]:
    prompts = _first_prompts()
    counts: dict[str, int] = {}
    lock = threading.Lock()

    class Provider(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
            text = json.dumps(body["messages"])
            entry = next(i for i, p in prompts.items() if json.dumps(p)[1:-1][:60] in text)
            with lock:
                n = counts[entry] = counts.get(entry, 0) + 1
                seen.requests.append((time.monotonic(), entry, n, body))
            calls: list[tuple[str, dict[str, Any]]] = []
            if entry == SLOW_ID and n == 1:
                calls = [("pwd", {})]  # warms the worker up before the timed call
            elif entry == SLOW_ID and n == 2:
                calls = [("power", {"base": 3, "exponent": 1_000_000_000})]  # hours of work
            elif entry != SLOW_ID and n == 1:
                seen.slow_started.wait(120)  # the others go on only once the slow call is on
            data = _reply(None if calls else "done", calls, bool(body.get("stream")))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream" if body.get("stream") else
                             "application/json")  # fmt: skip
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            if calls and calls[0][0] == "power":
                seen.slow_sent = time.monotonic()
                seen.slow_started.set()

    return Provider


@dataclass
class Project:
    root: Path
    seen: Seen

    def run(self, *extra: str) -> subprocess.Popen[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
        return subprocess.Popen(
            [sys.executable, "-m", "harness.cli", "run", "slow.yaml", "--providers", "fake",
             "--modes", "react", "--no-progress", "--record-mode", "all", "--cassettes", "cas",
             "--db", "db/h.duckdb", "--concurrency", "3", *extra],
            cwd=self.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    seen = Seen()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _provider(seen))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    (tmp_path / "harness.toml").write_text(
        "[providers.fake]\n"
        'kind = "openai"\n'
        f'base_url = "http://127.0.0.1:{server.server_address[1]}/v1"\n'
        'model = "m"\n'
        "max_retries = 0\n"
        "prices = {input_per_mtok = 0, output_per_mtok = 0}\n",
        encoding="utf-8",
    )
    (tmp_path / "slow.yaml").write_text(SUITE, encoding="utf-8")
    try:
        yield Project(tmp_path, seen)
    finally:
        seen.slow_started.set()
        server.shutdown()


@pytest.mark.timeout(600)  # a whole `harness run`: BFCL's worker starts, imports, grades
def test_a_slow_bfcl_call_is_stopped_at_its_limit_while_other_cells_go_on(
    project: Project,
) -> None:
    proc = project.run("--provider-concurrency", "3")
    try:
        _, err = proc.communicate(timeout=600)
    finally:
        proc.kill()
    assert proc.returncode in (0, 1), err[-3000:]  # failed tasks at most: no error cell
    seen = project.seen
    assert seen.slow_sent is not None, err[-3000:]
    after = [(t, e, n, b) for t, e, n, b in seen.requests if e == SLOW_ID and n == 3]
    assert after, "the slow cell never came back"
    back, _, _, body = after[0]
    results = [m["content"] for m in body["messages"] if m["role"] == "tool"]
    assert results[-1] == (
        f"error: power: BFCL's call took over {CALL_TIME_LIMIT_S:g} s and was stopped"
    )
    assert back - seen.slow_sent < CALL_TIME_LIMIT_S + 2
    others = [t for t, e, n, _ in seen.requests if e in OTHER_IDS and n >= 2]
    assert others, "the other cells never went on"
    # Every later request of the other cells was served while the slow call ran.
    assert max(others) < back, (others, back)


@pytest.mark.timeout(360)  # the start (BFCL's worker imports) may take minutes at load 13
def test_ctrl_c_during_a_slow_bfcl_call_exits_130(project: Project) -> None:
    proc = project.run()
    try:
        assert project.seen.slow_started.wait(300), "the slow call never started"
        time.sleep(1)
        proc.send_signal(signal.SIGINT)
        # The call runs for hours: only Ctrl-C ends this run (the wait is a guard against a
        # hang, not a measure).
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=60)
    finally:
        proc.kill()
        _, err = proc.communicate()
    assert proc.returncode == 130, err[-3000:]
