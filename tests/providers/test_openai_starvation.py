"""Thinking starvation (A2.6) end to end: a real OpenAI-compatible HTTP server on 127.0.0.1
(pytest-httpserver) returns turns that spent the whole output cap on reasoning; the kernel
escalates the cap once, then ends the run as error_thinking_starved."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer

import harness
from harness import Category, FinishReason
from harness.events import MaxTokensEscalation

PATH = "/v1/chat/completions"


def completion(
    content: str | None, finish: str, completion_tokens: int, reasoning: int
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1741569952,
        "model": "thinker-1",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": content,
                    "reasoning_content": "Let me think about this... " * 3,
                },
                "finish_reason": finish,
            }
        ],
        "usage": {
            "prompt_tokens": 40,
            "completion_tokens": completion_tokens,
            "total_tokens": 40 + completion_tokens,
            "completion_tokens_details": {"reasoning_tokens": reasoning},
        },
    }


STARVED = completion(None, "length", 100, 100)
ANSWER = completion("The answer is 42.", "stop", 150, 140)


@pytest.fixture
def profile(tmp_path: Path, httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "harness.toml").write_text(
        "[providers.thinker]\n"
        'kind = "openai"\n'
        f'base_url = "{httpserver.url_for("/v1")}"\n'
        'model = "thinker-1"\n'
        "stream = false\n"
        "max_retries = 0\n"
        "prices = {input_per_mtok = 1, output_per_mtok = 2}\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    return "thinker"


def _bodies(httpserver: HTTPServer) -> list[dict[str, Any]]:
    return [json.loads(request.get_data()) for request, _ in httpserver.log]


async def test_a_starved_turn_is_retried_once_with_four_times_the_cap(
    httpserver: HTTPServer, profile: str
) -> None:
    httpserver.expect_ordered_request(PATH, method="POST").respond_with_json(STARVED)
    httpserver.expect_ordered_request(PATH, method="POST").respond_with_json(ANSWER)
    events: list[Any] = []
    result = await harness.arun(
        "What is 6*7?", provider=profile, max_tokens=100, on_event=events.append
    )
    httpserver.check_assertions()
    assert result.finish_reason is FinishReason.STOP
    assert result.text == "The answer is 42."
    escalations = [e for e in events if isinstance(e, MaxTokensEscalation)]
    assert escalations == [MaxTokensEscalation(100, 400, 100, 100)]
    first, second = _bodies(httpserver)
    assert (first["max_tokens"], second["max_tokens"]) == (100, 400)
    # The starved turn left nothing in the transcript, but its usage counts.
    assert [m.role for m in result.messages] == ["user", "assistant"]
    assert result.llm_calls == 2
    assert result.usage.output_tokens == 250
    assert result.usage.reasoning_tokens == 240
    assert result.iterations == 0


async def test_a_second_starvation_ends_the_run_with_its_diagnostic(
    httpserver: HTTPServer, profile: str
) -> None:
    httpserver.expect_ordered_request(PATH, method="POST").respond_with_json(STARVED)
    httpserver.expect_ordered_request(PATH, method="POST").respond_with_json(
        completion("   ", "length", 400, 398)
    )
    result = await harness.arun("What is 6*7?", provider=profile, max_tokens=100)
    httpserver.check_assertions()
    assert result.finish_reason is FinishReason.ERROR_THINKING_STARVED
    assert result.category is Category.CAPACITY
    assert result.error_diagnostic == {
        "completion_cap": 400,
        "output_tokens": 400,
        "reasoning_tokens": 398,
        "escalated_cap": 400,
    }
    assert result.halted_reason is not None
    assert "thinking starved" in result.halted_reason
    assert "escalated_cap=400" in result.halted_reason
    assert result.llm_calls == 2


async def test_no_headroom_ends_the_run_without_a_retry(
    httpserver: HTTPServer, profile: str
) -> None:
    httpserver.expect_ordered_request(PATH, method="POST").respond_with_json(STARVED)
    result = await harness.arun(
        "What is 6*7?", provider=profile, max_tokens=100, context_window=100
    )
    httpserver.check_assertions()
    assert result.finish_reason is FinishReason.ERROR_THINKING_STARVED
    assert result.error_diagnostic is not None
    assert result.error_diagnostic["escalated_cap"] is None
    assert "no headroom" in (result.halted_reason or "")
    assert result.llm_calls == 1


async def test_a_length_stop_with_text_is_not_starvation(
    httpserver: HTTPServer, profile: str
) -> None:
    httpserver.expect_ordered_request(PATH, method="POST").respond_with_json(
        completion("The answer is", "length", 100, 60)
    )
    result = await harness.arun("What is 6*7?", provider=profile, max_tokens=100)
    assert result.finish_reason is FinishReason.STOP
    assert result.text == "The answer is"
    assert result.llm_calls == 1
