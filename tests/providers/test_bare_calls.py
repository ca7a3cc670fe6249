"""Tool calls written as bare JSON: read only when the whole reply is exactly such calls to
offered tools, and marked as repaired in the run's call records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

import harness
from harness.providers._bare_calls import parse_bare_calls

OFFERED = {"read_file", "calculator"}


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ('{"name": "read_file", "arguments": {"path": "a.txt"}}', ["read_file"]),
        ('```json\n{\n  "name": "calculator",\n  "arguments": {"expression": "1+1"}\n}\n```',
         ["calculator"]),
        ('[{"name": "read_file", "arguments": {"path": "a"}}, '
         '{"name": "calculator", "parameters": {"expression": "2"}}]', ["read_file", "calculator"]),
    ],
)  # fmt: skip
def test_whole_reply_calls_are_read(text: str, names: list[str]) -> None:
    calls = parse_bare_calls(text, OFFERED)
    assert calls is not None
    assert [c.name for c in calls] == names
    assert len({c.id for c in calls}) == len(calls)
    assert parse_bare_calls(text, OFFERED) == calls  # the same ids on a replay


@pytest.mark.parametrize(
    "text",
    [
        'Sure: {"name": "read_file", "arguments": {"path": "a.txt"}}',  # prose around it
        '{"name": "delete_all", "arguments": {}}',  # a tool that was not offered
        '{"name": "read_file", "arguments": "a.txt"}',  # arguments not an object
        '{"name": "read_file", "arguments": {}, "extra": 1}',  # other keys: some other JSON
        '{"answer": 42}',
        "[]",
        "42",
        '{"name": "read_file", "arguments": {"path": "a"}',  # unclosed
    ],
)
def test_anything_else_stays_text(text: str) -> None:
    assert parse_bare_calls(text, OFFERED) is None


def _reply(content: str) -> dict[str, object]:
    return {
        "id": "x",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 9, "total_tokens": 59},
    }  # fmt: skip


@pytest.mark.parametrize("enabled", [True, False])
def test_a_profile_reads_bare_calls_only_when_asked(
    httpserver: HTTPServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, enabled: bool
) -> None:
    (tmp_path / "harness.toml").write_text(
        f'[providers.small]\nkind = "openai"\nbase_url = "{httpserver.url_for("/v1")}"\n'
        f'model = "tiny"\nstream = false\nbare_json_calls = {str(enabled).lower()}\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    replies = iter(
        [_reply('{"name": "calculator", "arguments": {"expression": "6*7"}}'), _reply("42")]
    )
    httpserver.expect_request("/v1/chat/completions").respond_with_handler(
        lambda _request: __import__("werkzeug").Response(
            json.dumps(next(replies)), content_type="application/json"
        )
    )
    result = harness.run("What is 6*7?", provider="small", tools=["calculator"])
    if enabled:
        assert result.tool_calls_made == 1
        assert result.text == "42"
        assert result.calls[0].repaired is not None
        assert "bare_json" in result.calls[0].repaired
        assert result.calls[1].repaired is None
        # The next request carries the call as a real tool call, and its result.
        second = json.loads(httpserver.log[1][0].get_data())
        assert second["messages"][1]["tool_calls"][0]["function"]["name"] == "calculator"
        assert second["messages"][2]["content"] == "42"
    else:
        assert result.tool_calls_made == 0
        assert (result.text or "").startswith('{"name": "calculator"')
        assert all(c.repaired is None for c in result.calls)
