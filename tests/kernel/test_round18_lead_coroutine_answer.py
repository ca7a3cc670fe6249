"""An async hook answering a coroutine it forgot to await (round 18, the lead): the run halted
naming it (``unsupported return value <coroutine ...>``) and Python then printed ``RuntimeWarning:
coroutine '...' was never awaited`` on the terminal when the coroutine was collected. The
harness closes the coroutine it will not run."""

from __future__ import annotations

import gc
import warnings

from conftest import answered


async def _later() -> None:
    return None


async def _hook_answer() -> object:
    return _later()  # the coroutine, not awaited


def test_a_coroutine_answer_is_named_and_closed_without_a_warning() -> None:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = answered("UserPromptSubmit", _hook_answer)
        gc.collect()
    assert (result.halted_reason or "").startswith(
        "hook_crashed: UserPromptSubmit: unsupported return value <coroutine object _later"
    ), result.halted_reason
    assert [str(w.message) for w in seen if "never awaited" in str(w.message)] == []
