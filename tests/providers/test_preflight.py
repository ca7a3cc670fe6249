"""The pre-flight check against loopback servers that render a chat template the way real
servers do: one shows the model its system message, one drops it (as llama-cpp-python's
``--chat_format gemma`` does), one shows it to a model that ignores it."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from harness.providers._preflight import CODE_WORD, SYSTEM_TEXT, check_system_message_sync


def _server_handler(*, drop_system: bool, obey: bool) -> Any:
    def handle(request: Request) -> Response:
        body = json.loads(request.get_data())
        turns = [m for m in body["messages"] if not (drop_system and m["role"] == "system")]
        rendered = "".join(f"<{m['role']}>{m['content']}</{m['role']}>" for m in turns)
        # The model "sees" what the template rendered: it obeys an instruction it was shown.
        saw_rule = CODE_WORD in rendered
        text = f"{CODE_WORD} Hello!" if saw_rule and obey else "Hello there!"
        reply = {
            "id": "x",
            "object": "chat.completion",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": text},
                 "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": len(rendered) // 4, "completion_tokens": 4,
                      "total_tokens": len(rendered) // 4 + 4},
        }  # fmt: skip
        return Response(json.dumps(reply), content_type="application/json")

    return handle


@pytest.fixture
def profile_dir(httpserver: HTTPServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "harness.toml").write_text(
        "[providers.loop]\n"
        'kind = "openai"\n'
        f'base_url = "{httpserver.url_for("/v1")}"\n'
        'model = "tiny"\n'
        "stream = false\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    ("drop_system", "obey", "ok", "says"),
    [
        (False, True, True, "obeyed"),
        (True, True, False, "system message was not shown"),
        (False, False, False, "ignored the system message's instruction"),
    ],
)
def test_preflight_verdicts(
    httpserver: HTTPServer, profile_dir: Path, drop_system: bool, obey: bool, ok: bool, says: str
) -> None:
    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(
        _server_handler(drop_system=drop_system, obey=obey)
    )
    result = check_system_message_sync("loop")
    assert result.ok is ok, result.reason
    assert says in result.reason
    assert result.system_chars == len(SYSTEM_TEXT)
    sent = json.loads(httpserver.log[0][0].get_data())
    assert sent["messages"][0] == {"role": "system", "content": SYSTEM_TEXT}
    assert sent["temperature"] == 0.0


def test_preflight_dead_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as sock:  # a port nothing listens on once the socket is closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    (tmp_path / "harness.toml").write_text(
        f'[providers.loop]\nkind = "openai"\nbase_url = "http://127.0.0.1:{port}/v1"\n'
        'model = "tiny"\nstream = false\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    result = check_system_message_sync("loop", timeout_s=5)
    assert not result.ok
    assert result.reason.startswith("no answer")
    assert "REFUSED" in result.line()
