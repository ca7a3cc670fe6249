"""A hostile provider's long error printed by ``harness run`` (adversary round 10, issue 34).

A 400 whose message is 200,000 digits made ``harness run`` sit at its summary, every cell
stored, for more than two minutes (killed at 120 s): rich's automatic highlighting takes time
quadratic in a line's length (16,000 zeros: 8.6 s). The same held for an executor's or a
plug-in's long error text. Now strings past ``HIGHLIGHT_MAX_CHARS`` are printed plain. The real
CLI runs in this process (click's runner) against a loopback OpenAI-compatible server.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main

DIGITS = "0" * 200_000


class _Refuses(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        body = json.dumps({"error": {"message": DIGITS}}).encode()
        self.send_response(400)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def port() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Refuses)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()


@pytest.mark.timeout(300)  # before: more than 20 minutes at the summary
def test_a_provider_error_of_200000_digits_is_printed_without_stalling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, port: int
) -> None:
    (tmp_path / "harness.toml").write_text(
        f'[providers.fake]\nkind = "openai"\nbase_url = "http://127.0.0.1:{port}/v1"\n'
        'model = "m"\nmax_retries = 0\nprices = {input_per_mtok = 0, output_per_mtok = 0}\n'
    )
    (tmp_path / "s.yaml").write_text(
        "suite: s\ntasks:\n"
        "  - {id: a, prompt: hi, tools: [], expect: {kind: contains, value: hi}}\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HARNESS_LIVE_PREFLIGHT", "0")
    args = ["run", "s.yaml", "--providers", "fake", "--modes", "react", "--db", "h.duckdb",
            "--no-progress", "--record-mode", "all", "--cassettes", "cas"]  # fmt: skip
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 3, done.output[-2000:]
    assert "1/1 cells, 0 passed, 0 failed, 1 errored" in done.output
    assert f"bad_request (HTTP 400): {DIGITS}" in done.output
