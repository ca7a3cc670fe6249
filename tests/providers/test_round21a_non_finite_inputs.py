"""A tool call's arguments given as an object holding ``NaN`` or ``Infinity`` (issue 34,
adversary round 21, part A).

Python's ``json`` reads ``NaN`` and ``Infinity``, which JSON has not. An Anthropic ``tool_use``
``input`` (or an Ollama call's ``arguments`` object) holding one was taken as the call's
arguments, and the next request echoing them could not be written: ``provider crashed:
ValueError: Out of range float values are not JSON compliant``, the run over. Such arguments
are now what they are, arguments that are not valid JSON: the model is told so, as for any
(OpenAI's arguments are a string: its NaN reached the tool, and still does)."""

from __future__ import annotations

import httpx
import pytest

import harness

_ANTHROPIC = (
    '{"id":"m","type":"message","role":"assistant","model":"c","content":%s,'
    '"stop_reason":"%s","usage":{"input_tokens":1,"output_tokens":1}}'
)
_OLLAMA = '{"model":"m","message":{"role":"assistant","content":"%s"%s},"done":true}'


class _Twice(httpx.AsyncBaseTransport):
    def __init__(self, first: str, then: str) -> None:
        self.replies = [first, then]

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        return httpx.Response(
            200, content=body.encode(), headers={"content-type": "application/json"}
        )


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity"])
def test_an_anthropic_tool_input_holding_nan_is_told_as_invalid_json(
    number: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-round21a-test")
    call = '[{"type":"tool_use","id":"t1","name":"calculator","input":{"expression": %s}}]'
    transport = _Twice(
        _ANTHROPIC % (call % number, "tool_use"),
        _ANTHROPIC % ('[{"type":"text","text":"done"}]', "end_turn"),
    )
    result = harness.run("hi", provider="anthropic:claude-x", tools=["calculator"],
                         provider_opts={"transport": transport, "stream": False,
                                        "base_url": "http://127.0.0.1:1"})  # fmt: skip
    # on 84cec7a: "provider crashed: ValueError: Out of range float values are not JSON ..."
    assert (result.finish_reason, result.text) == ("stop", "done"), result.halted_reason
    told = [m.content for m in result.messages if m.role == "tool"]
    assert told[0].startswith("error: tool arguments were not valid JSON")


def test_an_ollama_arguments_object_holding_nan_is_told_as_invalid_json() -> None:
    call = ',"tool_calls":[{"function":{"name":"calculator","arguments":{"expression":NaN}}}]'
    transport = _Twice(_OLLAMA % ("", call), _OLLAMA % ("done", ""))
    result = harness.run("hi", provider="ollama:m", tools=["calculator"],
                         provider_opts={"transport": transport, "stream": False,
                                        "base_url": "http://127.0.0.1:1"})  # fmt: skip
    assert (result.finish_reason, result.text) == ("stop", "done"), result.halted_reason
