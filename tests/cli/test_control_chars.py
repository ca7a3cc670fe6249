"""No CLI output lets text from a provider, a suite or a file name drive the terminal (issue 27,
adversary round 3): control characters (ESC, BEL, C1 CSI) are printed escaped, as ``harness
traces show`` already did. Each test runs the real ``harness`` in a subprocess.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from tests.bench.test_secret_sinks import _serve

#: Spawns processes, sandboxes, browsers, clusters or servers (the fast loop skips it).
pytestmark = pytest.mark.slow

#: Retitles the window, clears the screen, and a one-byte (C1) CSI.
HOSTILE = "bad \x1b]0;PWNED\x07\x1b[2J\x9b31m done"
SHOWN = "bad \\x1b]0;PWNED\\x07\\x1b[2J\\x9b31m done"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # what must never reach the terminal

SUITE = """\
suite: esc
tasks:
  - id: escerr
    prompt: "escerr please"
    expect: {kind: contains, value: ok}
"""


class _Provider(BaseHTTPRequestHandler):
    """Answers every request with a 401 whose message carries terminal escape sequences."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        data = json.dumps({"error": {"message": HOSTILE}}).encode()
        self.send_response(401)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def provider() -> Iterator[int]:
    server = _serve(_Provider)
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()


def _harness(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOSTILE_API_KEY": "sk-test-0123456789abcdef", "COLUMNS": "300"}
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args], cwd=root, env=env, capture_output=True,
        text=True, errors="surrogateescape", timeout=180, check=False,
    )  # fmt: skip


def _raw(run: subprocess.CompletedProcess[str]) -> list[str]:
    return RAW.findall(run.stdout + run.stderr)


def test_harness_run_prints_a_provider_error_escaped(tmp_path: Path, provider: int) -> None:
    (tmp_path / "harness.toml").write_text(
        f'[providers.hostile]\nkind = "openai"\nbase_url = "http://127.0.0.1:{provider}/v1"\n'
        'api_key_env = "HOSTILE_API_KEY"\nmodel = "m"\nmax_retries = 0\n'
        "prices = {input_per_mtok = 0, output_per_mtok = 0}\n",
        encoding="utf-8",
    )
    (tmp_path / "esc.yaml").write_text(SUITE, encoding="utf-8")
    run = _harness(
        tmp_path, "run", "esc.yaml", "--providers", "hostile", "--modes", "react",
        "--no-progress", "--record-mode", "all", "--cassettes", "cas", "--db", "h.duckdb",
    )  # fmt: skip
    assert run.returncode == 3, run.stderr  # the 401 cell is an error cell
    assert _raw(run) == []
    assert SHOWN in run.stderr  # the cell's error line, escaped


def test_suites_validate_prints_file_names_escaped(tmp_path: Path) -> None:
    good = "x\x1b]0;PWNED\x07.yaml"
    (tmp_path / good).write_text(
        "suite: s\ntasks:\n  - id: t\n    prompt: p\n    expect: {kind: contains, value: x}\n",
        encoding="utf-8",
    )
    run = _harness(tmp_path, "suites", "validate", ".")
    assert run.returncode == 0, run.stderr
    assert _raw(run) == []
    assert "x\\x1b]0;PWNED\\x07.yaml" in run.stdout
    (tmp_path / "y\x1b[2J.yaml").write_text("bad: [", encoding="utf-8")
    run = _harness(tmp_path, "suites", "validate", ".")
    assert run.returncode == 2
    assert _raw(run) == []
    assert "y\\x1b[2J.yaml:1:" in run.stderr  # the error names the file, escaped


def test_error_messages_naming_files_are_escaped(tmp_path: Path) -> None:
    db = "r\x1b]0;PWNED\x07.duckdb"
    run = _harness(tmp_path, "report", "--db", db, "--out", "out")
    assert run.returncode == 2
    assert _raw(run) == []
    assert "r\\x1b]0;PWNED\\x07.duckdb" in run.stderr
    run = _harness(tmp_path, "cassettes", "lint", "c\x1b[2J")  # a missing folder
    assert run.returncode == 2
    assert _raw(run) == []
    assert "c\\x1b[2J" in run.stdout
    (tmp_path / "d\x1b[2J").mkdir()  # click's own message: "'--db': File '...' is a directory"
    run = _harness(tmp_path, "report", "--db", "d\x1b[2J")
    assert run.returncode == 2
    assert _raw(run) == []
    assert "d\\x1b[2J" in run.stderr
