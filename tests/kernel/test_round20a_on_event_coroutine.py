"""An ``on_event`` subscriber that answers a coroutine (issue 34, adversary round 20, part A).

``on_event`` must be a plain function; an ``async def`` is refused when the run starts, but an
object whose ``__call__`` is ``async`` or a ``lambda`` around an async function passed that
check: each event's coroutine was dropped unrun, the run went on as if watched, and Python
printed ``RuntimeWarning: coroutine ... was never awaited`` on the terminal. As the lead did for
hooks, ``can_use_tool`` and tools (round 18), the coroutine is closed unrun and the run ends as
for a subscriber that raises (``error_halted``)."""

from __future__ import annotations

import gc
import warnings
from typing import Any

import pytest

import harness

TURNS = [
    {"tool_calls": [{"name": "calculator", "arguments": {"expression": "1+1"}}]},
    {"text": "done"},
]


async def _watch(event: object) -> None:
    raise AssertionError("never run")


class _Async:
    async def __call__(self, event: object) -> None:
        raise AssertionError("never run")


@pytest.mark.parametrize("kind", ["callable-object", "lambda"])
def test_a_subscriber_answering_a_coroutine_halts_the_run(kind: str) -> None:
    subscriber: Any = _Async() if kind == "callable-object" else (lambda e: _watch(e))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = harness.run(
            "hi", provider="mock", tools=["calculator"], provider_opts={"turns": TURNS},
            on_event=subscriber,
        )  # fmt: skip
        gc.collect()
    assert result.finish_reason == "error_halted"  # "stop" on 218441d
    assert result.halted_reason == "on_event returned a coroutine it did not await"
    assert not [w for w in seen if "never awaited" in str(w.message)]
