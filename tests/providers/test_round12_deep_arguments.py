"""Tool-call arguments that parse but nest too deep to copy (adversary round 12, part C).

JSON 480 to 990 levels deep is within the parser's reach, so round 10's fix (a document deeper
than the parser goes is arguments that are not JSON) let it through, and copying it
(``copy.deepcopy``, before the tool and for the turn's record) went past Python's recursion
limit: the run ended ``error_during_execution: internal error: RecursionError``. Now arguments
nested deeper than ``MAX_ARGUMENT_DEPTH`` (100) are an error the model is told, and the run goes
on. A real OpenAI-compatible server on loopback, and the mock provider."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fault_server import Fault, FaultServer, http_response

import harness
from harness import FinishReason
from harness.kernel._calls import MAX_ARGUMENT_DEPTH
from harness.providers import MockProvider


def _nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {"expression": "1+1"}
    for _ in range(levels):
        value = {"a": value}
    return value


def _reply(message: dict[str, Any]) -> bytes:
    body = {"id": "c", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}  # fmt: skip
    return http_response(200, json.dumps(body))


@pytest.mark.parametrize("levels", [600, 950])
def test_arguments_too_deep_to_copy_are_an_error_the_model_is_told(
    levels: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-deep-args")
    call = {
        "id": "t1",
        "type": "function",
        "function": {"name": "calculator", "arguments": json.dumps(_nested(levels))},
    }
    script = [Fault.raw(_reply({"role": "assistant", "content": None, "tool_calls": [call]})),
              Fault.raw(_reply({"role": "assistant", "content": "done"}))]  # fmt: skip
    with FaultServer(script) as server:
        opts = {"base_url": server.url, "stream": False, "max_retries": 0}
        result = harness.run("hi", provider="openai:m", provider_opts=opts, tools=["calculator"])
    assert result.finish_reason is FinishReason.STOP, result.halted_reason  # RecursionError before
    (told,) = [m.content for m in result.messages if m.role == "tool"]
    assert told.startswith("error: tool arguments were not valid JSON: ")
    assert told.endswith("Re-send the calculator call with corrected JSON arguments.")
    if levels == 600:  # parsed, then refused by depth (950 is past the parser here already)
        assert f"'(arguments nested deeper than {MAX_ARGUMENT_DEPTH} levels)'" in told


def test_arguments_at_the_limit_reach_the_tool() -> None:
    """100 levels (the arguments' object and 99 inside it) is far past any tool's schema, and
    is still passed on as it is."""
    deep = _nested(MAX_ARGUMENT_DEPTH - 2)
    provider = MockProvider(
        turns=[{"tool_calls": [{"name": "probe", "arguments": {"v": deep}}]}, {"text": "ok"}]
    )
    seen: list[Any] = []

    @harness.tool
    def probe(v: dict[str, Any]) -> str:
        """Records its argument."""
        seen.append(v)
        return "seen"

    result = harness.run("hi", provider=provider, tools=[probe])
    assert result.finish_reason is FinishReason.STOP
    assert seen == [deep]
