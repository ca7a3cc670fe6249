"""The live pre-flight of ``harness run`` (issue 35, item 3): before the first cell each live
provider is probed once (reachable, model present, system message honoured); one that fails is
reported in one line and its cells are not run (exit 3); replays are never probed.

Real loopback servers: one down (nothing listens on its port), one whose chat template drops
the system message (as llama-cpp-python's ``--chat_format gemma`` did), one serving another
model, and one good one.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner

from harness.bench._live import live_providers, model_listed
from harness.bench._matrix import expand
from harness.cli import main
from harness.providers._preflight import CODE_WORD
from harness.suites import load_suites


class _Model(BaseHTTPRequestHandler):
    """An OpenAI-compatible server whose "model" obeys the system message it is shown."""

    protocol_version = "HTTP/1.1"
    drop_system = False
    serves = "tiny"
    seen: list[str]

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, data: dict[str, Any]) -> None:
        body = json.dumps(data).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self.seen.append(f"GET {self.path}")
        self._send({"object": "list", "data": [{"id": self.serves, "object": "model"}]})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        self.seen.append(f"POST {self.path}")
        shown = [m for m in body["messages"] if not (self.drop_system and m["role"] == "system")]
        rendered = "".join(f"<{m['role']}>{m['content'] or ''}" for m in shown)
        text = f"{CODE_WORD} Hello." if CODE_WORD in rendered else "Hello."
        self._send(
            {
                "id": "x",
                "object": "chat.completion",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": len(rendered) // 4,
                    "completion_tokens": 3,
                    "total_tokens": len(rendered) // 4 + 3,
                },
            }
        )


def _serve(**attrs: Any) -> tuple[ThreadingHTTPServer, list[str]]:
    seen: list[str] = []
    handler = type("Handler", (_Model,), {**attrs, "seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, seen


def _free_port() -> int:
    with socket.socket() as sock:  # nothing listens there once the socket is closed
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    good, good_seen = _serve()
    mute, mute_seen = _serve(drop_system=True)
    other, other_seen = _serve(serves="another-model")
    urls = {
        "good": f"http://127.0.0.1:{good.server_port}/v1",
        "mute": f"http://127.0.0.1:{mute.server_port}/v1",
        "other": f"http://127.0.0.1:{other.server_port}/v1",
        "down": f"http://127.0.0.1:{_free_port()}/v1",
    }
    (tmp_path / "harness.toml").write_text(
        "".join(
            f'[providers.{name}]\nkind = "openai"\nbase_url = "{url}"\nmodel = "tiny"\n'
            "stream = false\nmax_retries = 0\ntimeout_s = 20\nmax_tokens = 64\n\n"
            for name, url in urls.items()
        ),
        encoding="utf-8",
    )
    (tmp_path / "hello.yaml").write_text(
        "suite: hello\ntasks:\n  - id: hi\n    prompt: 'Say hello.'\n"
        "    expect: {kind: contains, value: 'Hello'}\n  - id: hey\n    prompt: 'Say hey.'\n"
        "    expect: {kind: contains, value: 'Hello'}\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HARNESS_LIVE_PREFLIGHT")  # on, as for a user (tests/conftest.py)
    yield {"good": good_seen, "mute": mute_seen, "other": other_seen}
    for server in (good, mute, other):
        server.shutdown()
        server.server_close()


def _run(*extra: str) -> Any:
    return CliRunner().invoke(
        main,
        ["run", "hello.yaml", "--modes", "react", "--db", "h.duckdb", "--no-progress", *extra],
    )


def test_providers_that_fail_the_preflight_are_not_run(project: dict[str, list[str]]) -> None:
    result = _run(
        "--providers", "good,down,mute,other", "--record-mode", "all", "--label", "live"
    )  # fmt: skip
    out = " ".join(result.output.split())  # the console folds long lines
    assert result.exit_code == 3, out
    said = "pre-flight failed, its cells were not run:"
    assert out.count(said) == 3, out
    assert f"down: {said} not reachable at" in out
    assert f"mute: {said} the system message was not shown" in out
    assert f"other: {said} model 'tiny' is not served" in out
    assert "6 cell(s) not run" in out
    command = (
        "harness run hello.yaml --modes react --providers good,down,mute,other --record-mode "
        "all --db h.duckdb --label live --no-progress --resume"
    )
    assert command.replace(" ", "") in out.replace(" ", ""), out  # folded anywhere
    with duckdb.connect("h.duckdb", read_only=True) as con:
        stored = con.execute("select provider, count(*) from results group by 1").fetchall()
    assert stored == [("good", 2)]
    # Probed once each (listing, then the system-message request); the good one then ran both
    # cells, the refused ones nothing more.
    assert project["good"][:2] == ["GET /v1/models", "POST /v1/chat/completions"]
    assert len(project["good"]) == 4
    assert project["mute"] == ["GET /v1/models", "POST /v1/chat/completions"]
    assert project["other"] == ["GET /v1/models"]


def test_a_replay_never_probes(project: dict[str, list[str]]) -> None:
    """Recorded once, the same run with --record-mode once replays: no request at all."""
    assert _run("--providers", "good", "--record-mode", "once").exit_code == 0
    seen = len(project["good"])
    again = _run("--providers", "good", "--record-mode", "once")
    assert again.exit_code == 0, again.output
    assert len(project["good"]) == seen
    assert "pre-flight" not in again.output


def test_live_providers_are_those_whose_cells_reach_the_network(tmp_path: Path) -> None:
    suite = tmp_path / "s.yaml"
    suite.write_text(
        "suite: s\ntasks:\n  - id: a\n    prompt: 'x'\n    expect: {kind: contains, value: 'x'}\n",
        encoding="utf-8",
    )
    cells = expand(load_suites([str(suite)]), ["react"], ["mock", "openai:gpt-4o-mini"], 1)
    cassettes = tmp_path / "cassettes"
    assert live_providers(cells, cassettes, "none") == []
    assert live_providers(cells, cassettes, "all") == ["openai:gpt-4o-mini"]
    assert live_providers(cells, cassettes, "once") == ["openai:gpt-4o-mini"]
    (cell,) = [c for c in cells if not c.is_mock]
    path = cell.cassette(cassettes)
    assert path is not None
    path.parent.mkdir(parents=True)
    path.write_text("interactions: []\n", encoding="utf-8")
    assert live_providers(cells, cassettes, "once") == []  # replayed
    assert live_providers(cells, cassettes, "new_episodes") == ["openai:gpt-4o-mini"]


@pytest.mark.parametrize(
    ("model", "names", "listed"),
    [
        ("tiny", ["tiny"], True),
        ("llama3.1", ["llama3.1:latest"], True),  # Ollama's tags
        ("qwen2.5-coder-0.5b-instruct", ["models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"], True),
        ("claude-3-5-haiku-latest", ["claude-3-5-haiku-20241022"], True),
        ("gpt-4o", ["gpt-4o-mini"], False),
        ("qwen2.5-coder-0.5b-instruct", ["models/gemma-3-270m.gguf"], False),
    ],
)
def test_model_listed(model: str, names: list[str], listed: bool) -> None:
    assert model_listed(model, names) is listed
