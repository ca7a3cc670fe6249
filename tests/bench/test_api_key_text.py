"""An API key that cannot go in an HTTP header (adversary round 7, issue 34, noted then): a key
of undecodable bytes (``OPENAI_API_KEY=$'abc\\xff\\xfe'``, in ``os.environ`` as surrogates) made
every cell an error cell while recording (``UnicodeEncodeError: 'ascii' codec can't encode
characters in position 10-11``, exit 3) and, since the live pre-flight, a traceback (exit 1).

Now ``harness run`` stops before any cell or run row: one line naming the variable and the
byte, never the key, exit 2, for every provider kind that sends a key, recording or replaying,
and for a judge's provider. A loopback server of each kind counts the requests: none arrive.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness.cli import main

ENV = "LOOPBACK_API_KEY"
SECRET = "sk-loopback-7f3a"


class _Server(BaseHTTPRequestHandler):
    """Answers anything with one JSON reply and counts the requests."""

    protocol_version = "HTTP/1.1"
    seen: list[str]

    def log_message(self, *args: object) -> None:
        pass

    def _answer(self) -> None:
        self.seen.append(f"{self.command} {self.path}")
        self.rfile.read(int(self.headers.get("content-length") or 0))
        body = json.dumps({"data": [{"id": "m"}], "models": [{"name": "m"}]}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer


@pytest.fixture
def loopback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    seen: list[str] = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("S", (_Server,), {"seen": seen}))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}"
    (tmp_path / "harness.toml").write_text(
        "".join(
            f'[providers.{kind}-lb]\nkind = "{kind}"\nbase_url = "{url}{path}"\nmodel = "m"\n'
            f'api_key_env = "{ENV}"\nmax_retries = 0\nstream = false\n'
            "prices = {input_per_mtok = 0, output_per_mtok = 0}\n\n"
            for kind, path in (("openai", "/v1"), ("anthropic", ""), ("ollama", ""))
        ),
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HARNESS_LIVE_PREFLIGHT", raising=False)  # on, as for a user
    yield seen
    server.shutdown()
    server.server_close()


def _suite(tmp_path: Path, judge: str | None = None) -> str:
    expect = (
        f"{{kind: judge, provider: {judge}, rubric: Says x.}}"
        if judge
        else "{kind: contains, value: x}"
    )
    tasks = "".join(
        f"  - id: t{i}\n    prompt: hi\n    expect: {expect}\n    mock: {{turns: [{{text: x}}]}}\n"
        for i in range(2)
    )
    (tmp_path / "s.yaml").write_text(f"suite: s\ntasks:\n{tasks}", encoding="utf-8")
    return "s.yaml"


def _run(suite: str, provider: str, record_mode: str) -> Any:
    return CliRunner().invoke(
        main,
        ["run", suite, "--providers", provider, "--modes", "react", "--no-progress",
         "--record-mode", record_mode, "--cassettes", "cas", "--db", "h.duckdb"],
    )  # fmt: skip


@pytest.mark.parametrize("record_mode", ["all", "none"])
@pytest.mark.parametrize("kind", ["openai", "anthropic", "ollama", "judge"])
def test_a_key_of_undecodable_bytes_stops_the_run_before_any_cell(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    loopback: list[str],
    kind: str,
    record_mode: str,
) -> None:
    monkeypatch.setenv(ENV, SECRET + "\udcff\udcfe")  # the bytes \xff\xfe, as Python holds them
    if kind == "judge":  # the cells' provider is the mock; the judge's sends the key
        result = _run(_suite(tmp_path, judge="openai-lb"), "mock", record_mode)
    else:
        result = _run(_suite(tmp_path), f"{kind}-lb", record_mode)
    out = result.output
    assert result.exit_code == 2, out
    assert result.exception is None or isinstance(result.exception, SystemExit), out
    assert f"{ENV}: not ASCII (byte {len(SECRET)}); an HTTP header can carry" in " ".join(
        out.split()
    )
    assert result.stderr.startswith("error: "), out
    assert result.stderr.count("error") == 1, out
    assert SECRET not in out
    assert "\udcff" not in out
    assert "\\xff" not in out
    assert loopback == []  # no probe, no request
    assert not (tmp_path / "h.duckdb").exists()  # no run row, no cell
    assert not (tmp_path / "cas").exists()


def test_a_key_with_a_control_character_is_refused_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loopback: list[str]
) -> None:
    """A key read from a file with its newline (``$(cat key)`` strips it; other ways do not)."""
    monkeypatch.setenv(ENV, SECRET + "\n")
    result = _run(_suite(tmp_path), "openai-lb", "all")
    assert result.exit_code == 2, result.output
    assert f"{ENV}: a control character (byte {len(SECRET)})" in result.output
    assert SECRET not in result.output
    assert loopback == []


def test_a_profile_header_that_is_not_ascii_is_refused_as_the_profile_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loopback: list[str]
) -> None:
    """``headers = {...}`` in a profile go out with every request, so the same holds there."""
    with (tmp_path / "harness.toml").open("a", encoding="utf-8") as toml:
        toml.write(
            '[providers.hdr]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
            'model = "m"\nheaders = {"X-Team" = "équipe"}\n'
        )
    result = _run(_suite(tmp_path), "hdr", "all")
    assert result.exit_code == 2, result.output
    flat = " ".join(result.output.split())
    assert "header 'X-Team': not ASCII (byte 0)" in flat, flat
    assert "Traceback" not in result.output
    assert loopback == []
