"""``Retry-After`` headers a hostile server sends (adversary round 12 part A). Before: an HTTP
date whose numbers overflow (``Mon, 01 Jan 2000 99999999999999999999:00:00 GMT``) raised
``OverflowError`` out of the provider, and the run ended ``error_during_execution: unknown:
provider crashed: OverflowError``, the harness's own crash in words; ``Retry-After: nan`` made
the retry sleep until the call's deadline (20 s here; the default deadline is longer). Now
both say nothing usable: the retry waits its own backoff and gets the answer. A raw loopback
server."""

from __future__ import annotations

import json

import pytest
from fault_server import Fault, FaultServer, http_response

import harness
from harness.providers._http import _retry_after

OK = http_response(200, json.dumps({
    "id": "c", "object": "chat.completion", "created": 1, "model": "m",
    "choices": [{"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": "fine"}}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}))  # fmt: skip


@pytest.mark.parametrize(
    "header",
    ["Mon, 01 Jan 2000 99999999999999999999:00:00 GMT",
     "Mon, 01 Jan 2000 00:00:00 +9999999999999999999", "nan", "-nan"],
    ids=["hour-overflow", "zone-overflow", "nan", "minus-nan"],
)  # fmt: skip
def test_an_unusable_retry_after_is_ignored_and_the_retry_answers(
    header: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-retry-after")
    error = '{"error": {"message": "slow down"}}'
    busy = http_response(429, error, headers={"Retry-After": header})
    opts = {"max_retries": 1, "retry_initial_s": 0.01, "deadline_s": 20}
    with FaultServer([Fault.raw(busy), Fault.raw(OK)], lifetime_s=60) as server:
        result = harness.run(
            "hi", provider="openai:m", provider_opts={"base_url": server.url, **opts}
        )
    assert result.finish_reason == "stop", result.halted_reason
    assert result.text == "fine"
    assert _retry_after(header) is None


def test_usable_retry_after_values_are_kept() -> None:
    assert _retry_after("2.5") == 2.5
    assert _retry_after("-3") == 0.0
    assert _retry_after("inf") == float("inf")  # capped at retry_max_wait_s by the retry
    assert _retry_after("Thu, 01 Jan 1970 00:00:00 GMT") == 0.0
