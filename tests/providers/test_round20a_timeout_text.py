"""A provider call's timeout told without a memory address (issue 34, adversary round 20, part
A). httpx's ``ReadTimeout`` has no message; the harness took one from its cause chain, which
(anyio 4) is the event loop's cancel: ``ReadTimeout: CancelledError: Cancelled via cancel scope
7f5c4e65b7e0; reason: deadline exceeded`` in every timed-out cell's stored error and in the
pre-flight's warning, different at each run. A loopback server that never answers."""

from __future__ import annotations

import re

import pytest
from fault_server import Fault, FaultServer

import harness


@pytest.mark.timeout(60)
def test_a_timed_out_call_is_told_without_the_loops_cancel(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-timeout-text")
    with FaultServer([Fault.hang()], lifetime_s=30) as server:
        result = harness.run(
            "hi",
            provider="openai:m",
            tools=None,
            provider_opts={
                "base_url": f"{server.url}/v1",
                "timeout_s": 0.5,
                "max_retries": 0,
                "stream": False,
            },
        )
    why = result.halted_reason or ""
    assert "ReadTimeout" in why, why
    assert "cancel scope" not in why, why  # "... Cancelled via cancel scope 7f...; reason: ..."
    assert not re.search(r"\b[0-9a-f]{10,}\b", why), why
