"""A plug-in's unsupported answer named without a memory address (issue 34, adversary round 20,
part A).

``can_use_tool`` answering a ``concurrent.futures.Future``, a generator, an async generator or
any object with Python's default ``repr`` was told to the model as ``permission denied:
can_use_tool returned an unsupported value <Future at 0x7f4c86c12b10 state=pending>``: an
address, other at each run, in a request to the provider (a recorded run replayed with drift).
The lead named an unawaited coroutine without one in round 18; every such answer (a hook's
too) is now named by ``shown_value`` without its address."""

from __future__ import annotations

import concurrent.futures
import re
from collections.abc import Callable
from typing import Any

import pytest

import harness

TURNS = [
    {"tool_calls": [{"name": "calculator", "arguments": {"expression": "1+1"}}]},
    {"text": "done"},
]


def _generator() -> Any:
    yield "allow"


ANSWERS: dict[str, Callable[[], Any]] = {
    "cf-future": concurrent.futures.Future,
    "generator": _generator,
    "object": object,
}


def _told(result: harness.Result) -> str:
    texts = [str(m.content) for m in result.messages]
    return " | ".join([*texts, result.halted_reason or ""])


@pytest.mark.parametrize("answer", sorted(ANSWERS))
def test_a_can_use_tool_answer_is_named_without_its_address(answer: str) -> None:
    result = harness.run(
        "hi", provider="mock", tools=["calculator"], provider_opts={"turns": TURNS},
        can_use_tool=lambda *args: ANSWERS[answer](),
    )  # fmt: skip
    told = _told(result)
    assert "can_use_tool returned an unsupported value" in told
    assert not re.search(r"0x[0-9a-f]{6,}", told), told  # "<Future at 0x7f...>" on 218441d


def test_a_hooks_answer_is_named_without_its_address() -> None:
    result = harness.run(
        "hi", provider="mock", tools=["calculator"], provider_opts={"turns": TURNS},
        hooks={"PreToolUse": [lambda payload, tool_use_id: object()]},
    )  # fmt: skip
    told = _told(result)
    assert "unsupported return value" in told, told
    assert not re.search(r"0x[0-9a-f]{6,}", told), told
