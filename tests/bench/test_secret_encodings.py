"""A key a provider spells so that a plain search misses it still reaches no cassette (issue 27,
adversary round 3): a 401 body spelling it in JSON ``\\uXXXX`` escapes (valid JSON: any parser
turns it back into the key), and a stream that starts it in one chunk's ``reasoning_content``
and ends it in the next chunk's ``content``. ``harness run`` records both against a loopback
OpenAI-compatible provider; the cassettes must hold neither the key nor its halves, still replay,
and ``harness cassettes lint`` must catch the escaped spelling in a cassette that keeps it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml

from tests.bench.test_secret_sinks import ENV_NAME, HALF, KEY, _leaks, _serve

#: Spawns processes, sandboxes, browsers, clusters or servers (the fast loop skips it).
pytestmark = pytest.mark.slow

ESCAPED = "".join(f"\\u{ord(c):04x}" for c in KEY)  # "\u0073\u006b\u002d..."

SUITE = """\
suite: spelt
tasks:
  - id: uesc
    prompt: "uesc please"
    expect: {kind: contains, value: x}
  - id: crossfield
    prompt: "crossfield please"
    expect: {kind: contains, value: ok}
"""


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    event = {"id": "c1", "object": "chat.completion.chunk", "model": "m",
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip
    return b"data: " + json.dumps(event).encode() + b"\n\n"


def _crossfield() -> bytes:
    """Reasoning "key <first half>", then the answer "<second half> ok"."""
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    last = {"id": "c1", "object": "chat.completion.chunk", "model": "m", "choices": [],
            "usage": usage}  # fmt: skip
    return (
        _chunk({"role": "assistant", "reasoning_content": f"key {KEY[:HALF]}"})
        + _chunk({"content": f"{KEY[HALF:]} ok"})
        + _chunk({}, "stop")
        + b"data: " + json.dumps(last).encode() + b"\n\ndata: [DONE]\n\n"
    )  # fmt: skip


class _Provider(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
        if "uesc" in str(body["messages"][-1]["content"]):
            error = '{"error":{"message":"Incorrect API key provided: ' + ESCAPED + '"}}'
            self._send(401, "application/json", error.encode())
        else:
            self._send(200, "text/event-stream", _crossfield())

    def _send(self, status: int, ctype: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _harness(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, ENV_NAME: KEY}
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args], cwd=root, env=env, capture_output=True,
        text=True, timeout=180, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("spelt")
    server = _serve(_Provider)
    (root / "harness.toml").write_text(
        f'[providers.leaky]\nkind = "openai"\n'
        f'base_url = "http://127.0.0.1:{server.server_address[1]}/v1"\n'
        f'api_key_env = "{ENV_NAME}"\nmodel = "m"\nmax_retries = 0\n'
        "prices = {input_per_mtok = 0, output_per_mtok = 0}\n",
        encoding="utf-8",
    )
    (root / "spelt.yaml").write_text(SUITE, encoding="utf-8")
    try:
        run = _harness(
            root, "run", "spelt.yaml", "--providers", "leaky", "--modes", "react",
            "--no-progress", "--record-mode", "all", "--cassettes", "cas", "--db", "rec.duckdb",
        )  # fmt: skip
        assert run.returncode == 3, run.stderr  # the 401 cell is an error cell
        yield root
    finally:
        server.shutdown()


def _body(root: Path, task: str) -> str:
    (file,) = (root / "cas").rglob(f"{task}.e0.yaml")
    data = yaml.safe_load(file.read_text(encoding="utf-8"))
    body = data["interactions"][0]["response"]["body"]["string"]
    return body if isinstance(body, str) else body.decode("utf-8")


def _decoded(body: str) -> str:
    """What a client reads: the body's JSON (each SSE ``data:`` line's) decoded."""
    docs = [line[5:] for line in body.splitlines() if line.startswith("data: {")] or [body]
    return json.dumps([json.loads(doc) for doc in docs], ensure_ascii=False)


def test_a_key_in_unicode_escapes_is_scrubbed_as_it_decodes(recorded: Path) -> None:
    body = _body(recorded, "uesc")
    assert ESCAPED not in body
    assert not _leaks(_decoded(body))
    assert json.loads(body)["error"]["message"] == "Incorrect API key provided: REDACTED"
    lint = _harness(recorded, "cassettes", "lint", "cas")
    assert lint.returncode == 0, lint.stdout
    replay = _harness(
        recorded, "run", "spelt.yaml", "--providers", "leaky", "--modes", "react",
        "--no-progress", "--cassettes", "cas", "--db", "replay.duckdb", "--tasks", "uesc",
    )  # fmt: skip
    assert replay.returncode == 3, replay.stderr
    assert "Incorrect API key provided: REDACTED" in replay.stderr.replace("\n", " ")


def test_a_key_split_between_reasoning_and_answer_leaves_neither_half(recorded: Path) -> None:
    body = _body(recorded, "crossfield")
    assert not _leaks(body)
    assert not _leaks(_decoded(body))
    replay = _harness(
        recorded, "run", "spelt.yaml", "--providers", "leaky", "--modes", "react",
        "--no-progress", "--cassettes", "cas", "--db", "replay2.duckdb", "--tasks", "crossfield",
    )  # fmt: skip
    assert replay.returncode == 0, replay.stderr  # the scrubbed chunks still parse
    con = duckdb.connect(str(recorded / "replay2.duckdb"), read_only=True)
    try:
        (text,) = con.execute("SELECT text FROM results").fetchone() or ("",)
    finally:
        con.close()
    assert text == " ok"


def test_lint_finds_a_key_spelt_in_unicode_escapes(recorded: Path, tmp_path: Path) -> None:
    """A cassette that keeps the escaped spelling (as the old scrubber wrote it) fails lint."""
    (file,) = (recorded / "cas").rglob("uesc.e0.yaml")
    data = yaml.safe_load(file.read_text(encoding="utf-8"))
    data["interactions"][0]["response"]["body"]["string"] = (
        '{"error":{"message":"Incorrect API key provided: ' + ESCAPED + '"}}'
    )
    (tmp_path / "kept.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    lint = _harness(tmp_path, "cassettes", "lint", ".")
    assert lint.returncode == 1, lint.stdout
    assert "response.body.string (JSON).error.message" in lint.stdout
    assert "api-key" in lint.stdout
    assert KEY not in lint.stdout  # masked
