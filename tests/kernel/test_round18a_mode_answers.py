"""What a plug-in mode's ``iterate`` answers, read by the loop (issue 34, adversary round 18,
part A).

The loop asked ``isinstance(outcome, Halt)`` in the run's task: for an object whose class is
neither, ``isinstance`` reads its ``__class__``, which is the plug-in's code: raising, it was the
harness's "internal error" with a traceback on the terminal; cancelling the run's task, it left
``harness.run`` as ``CancelledError``, and so did a ``repr`` that cancels it (the loop's
message names the answer). ``Halt("done")`` (a ``str``, not a ``FinishReason``) raised
``AttributeError: 'str' object has no attribute 'category'`` out of ``harness.run``. Now the
answer is read once, guarded, and anything else is the mode's failure, named."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from conftest import calling_plain, plain

import harness
from harness.core._terminations import FinishReason
from harness.kernel import Halt
from harness.modes import ReAct


class _SlyClass:
    def __init__(self, action: str) -> None:
        self.action = action

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        if object.__getattribute__(self, "action") == "raise":
            raise RuntimeError("class boom")
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
        return object

    def __repr__(self) -> str:
        return "<sly>"


class _CancellingRepr:
    def __repr__(self) -> str:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
        return "<cancelling>"


class _CancellingHalt(Halt):
    def __getattribute__(self, name: str) -> Any:
        if name == "reason":
            task = asyncio.current_task()
            assert task is not None
            task.cancel()
        return object.__getattribute__(self, name)


ANSWERS: dict[str, tuple[Callable[[], object], str]] = {
    "class-raises": (lambda: _SlyClass("raise"), "returned <sly>"),
    "class-cancels": (lambda: _SlyClass("cancel"), "returned <sly>"),
    "repr-cancels": (
        _CancellingRepr,
        "returned a _CancellingRepr that, read, cancelled its run's task",
    ),
    "halt-reason-cancels": (
        lambda: _CancellingHalt(FinishReason.STOP),
        "returned a _CancellingHalt that, read, cancelled its run's task",
    ),
    "halt-str": (
        lambda: Halt("done"),  # type: ignore[arg-type]
        "returned a Halt whose reason is 'done', not a FinishReason",
    ),
    "halt-int": (lambda: Halt(5), "returned a Halt whose reason is 5, not a FinishReason"),  # type: ignore[arg-type]
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(ANSWERS))
def test_a_modes_answer_that_is_no_outcome_is_the_modes_failure(case: str) -> None:
    make, said = ANSWERS[case]

    class Answering(ReAct):
        name = "answering"

        async def iterate(self, state: Any) -> Any:
            return make()

    result = harness.run("hi", tools=[plain], provider=calling_plain(), mode=Answering())
    assert result.finish_reason == "error_during_execution"  # raised, or an internal error
    assert result.halted_reason == f"mode 'answering' {said}; expected Continue() or Halt()"


def test_a_halt_subclass_with_a_reason_still_ends_the_run() -> None:
    class Done(Halt):
        pass

    class Halting(ReAct):
        name = "halting"

        async def iterate(self, state: Any) -> Any:
            return Done(FinishReason.STOP)

    result = harness.run("hi", tools=[plain], provider=calling_plain(), mode=Halting())
    assert result.finish_reason == "stop"
