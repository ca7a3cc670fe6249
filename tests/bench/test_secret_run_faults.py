"""A hostile reply never crashes a run that has secrets to scrub (issue 34, faults round 5).

Item 1: with any ``*_KEY`` variable set (``GITHUB_TOKEN`` is in every CI), a model reply of 500
nested brackets made the redactor's JSON path raise ``RecursionError``: ``harness run`` exited 1,
the run was marked failed and ``--resume`` crashed on the same cell again. Item 15: two secrets
where one's end is the other's start left the rest of the second (``REDACTED345678``) in the
store. Here a loopback OpenAI-compatible server answers each task with such a reply, recorded
into cassettes, and every cell must be stored with no part of any secret anywhere.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import duckdb
import pytest

#: Spawns processes, sandboxes, browsers, clusters or servers (the fast loop skips it).
pytestmark = pytest.mark.slow

KEY = "sk-leak-7Hq2vN9xRk4LmP0sT8wZ"
ESCAPED = "".join(f"\\u{ord(c):04x}" for c in KEY)
A, B = "abcdefgh12", "gh12345678"  # B starts where A ends
DEEP = 5_000

#: The reply to each task's prompt.
REPLIES = {
    "brackets": "[" * 500 + '"\\u0041"' + "]" * 500,  # the reply
    "objects": '{"a":' * DEEP + '"x\\n"' + "}" * DEEP,  # deeper than json.loads goes
    "escaped": "[" * DEEP + '"' + ESCAPED + '"' + "]" * DEEP,  # the key in escapes, deep down
    "overlap": f"the keys: {A}345678 done",  # the overlapping pair
}

SUITE = "suite: hostile\ntasks:\n" + "".join(
    f"  - id: {name}\n    prompt: 'say {name}'\n    expect: {{kind: contains, value: 'a'}}\n"
    for name in REPLIES
)


def _provider() -> type[BaseHTTPRequestHandler]:
    class Provider(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
            prompt = str(body["messages"][-1]["content"])
            text = next(reply for name, reply in REPLIES.items() if f"say {name}" in prompt)
            usage = {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8}
            if body.get("stream"):
                chunk = {"id": "c1", "object": "chat.completion.chunk", "model": "m",
                         "choices": [{"index": 0, "delta": {"role": "assistant", "content": text},
                                      "finish_reason": "stop"}], "usage": usage}  # fmt: skip
                data = b"data: " + json.dumps(chunk).encode() + b"\n\ndata: [DONE]\n\n"
                self._send("text/event-stream", data)
            else:
                reply = {"id": "r1", "object": "chat.completion", "model": "m",
                         "choices": [{"index": 0, "finish_reason": "stop",
                                      "message": {"role": "assistant", "content": text}}],
                         "usage": usage}  # fmt: skip
                self._send("application/json", json.dumps(reply).encode())

        def _send(self, ctype: str, data: bytes) -> None:
            self.send_response(200)
            self.send_header("content-type", ctype)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Provider


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _provider())
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    (tmp_path / "harness.toml").write_text(
        "[providers.hostile]\n"
        'kind = "openai"\n'
        f'base_url = "http://127.0.0.1:{server.server_address[1]}/v1"\n'
        'api_key_env = "HOSTILE_API_KEY"\n'
        'model = "m"\n'
        "max_retries = 0\n"
        "prices = {input_per_mtok = 0, output_per_mtok = 0}\n",
        encoding="utf-8",
    )
    (tmp_path / "hostile.yaml").write_text(SUITE, encoding="utf-8")
    try:
        yield tmp_path
    finally:
        server.shutdown()


def _leaks(data: bytes) -> list[str]:
    """Parts (8 characters or more) of any secret in ``data``, raw or spelt in escapes."""
    text = data.decode("utf-8", "replace")
    found = []
    for secret in (KEY, A, B):
        for i in range(len(secret) - 5):
            part = secret[i : i + 6]
            if part in text:
                found.append(part)
    if ESCAPED[:24] in text:
        found.append("escaped key")
    return found


def test_hostile_replies_with_secrets_set_store_every_cell_and_no_secret(project: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update({"HOSTILE_API_KEY": KEY, "OVERLAP_A_KEY": A, "OVERLAP_B_TOKEN": B})
    run = subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", "hostile.yaml", "--providers", "hostile",
         "--modes", "react", "--no-progress", "--record-mode", "all", "--cassettes", "cas",
         "--db", "db/h.duckdb", "--trace-file", "t.jsonl", "--label", "hostile"],
        cwd=project, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    assert "RecursionError" not in run.stderr + run.stdout
    con = duckdb.connect(str(project / "db" / "h.duckdb"), read_only=True)
    try:
        cells = con.execute("SELECT task_id, status, error FROM results").fetchall()
        (status,) = con.execute("SELECT status FROM bench_runs").fetchone() or ("?",)
        tables = [t for (t,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()]
        stored = json.dumps(
            {t: con.execute(f'SELECT * FROM "{t}"').fetchall() for t in tables}, default=str
        ).encode()
    finally:
        con.close()
    assert sorted(task for task, *_ in cells) == sorted(REPLIES), cells
    assert all(error is None for *_, error in cells), cells
    assert status == "finished", (status, run.stderr[-2000:])
    assert run.returncode == 0, run.stderr[-2000:]
    assert not _leaks(stored)
    for path in [*(project / "cas").rglob("*"), project / "t.jsonl"]:
        if path.is_file():
            assert not _leaks(path.read_bytes()), path
    assert not _leaks((run.stdout + run.stderr).encode())
