"""The one guard for a plug-in's synchronous code (``ran``, issue 34, the lead in round 20): a
hook that cancels its run's task and answers a coroutine it did not await is named for the
cancel and its coroutine closed, never run. Before, the coroutine was dropped unclosed: Python
printed "coroutine ... was never awaited" on the terminal (218441d, and the first version of
``ran``)."""

from __future__ import annotations

import asyncio
import gc
import warnings
from typing import Any

import harness
from harness.providers import MockProvider

ran_body: list[str] = []


async def _later() -> None:
    ran_body.append("ran")


def _hook(payload: Any, hook_id: Any) -> Any:
    task = asyncio.current_task()
    assert task is not None
    task.cancel()
    return _later()


def test_a_hook_cancelling_its_run_and_answering_a_coroutine_is_named_and_closed() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = harness.run(
            "hi",
            provider=MockProvider(turns=[{"text": "done"}]),
            hooks={"UserPromptSubmit": [{"hooks": [_hook]}]},
        )
        gc.collect()
    assert result.finish_reason == "error_halted"
    assert result.halted_reason == (
        "hook_crashed: UserPromptSubmit: CancelledError: it cancelled its run's task"
    )
    assert not [w for w in caught if "never awaited" in str(w.message)]
    assert ran_body == []
