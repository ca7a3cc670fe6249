"""A ``can_use_tool`` or hook answer whose reading runs the plug-in's code in the run's task
(issue 34, adversary round 17, part A). ``can_use_tool``'s answer is matched (``==``, class
patterns): an answer whose ``__eq__`` raised, or a ``Deny`` whose ``reason`` raised, ended the
run ``error_during_execution`` blaming a bare ``RuntimeError``; one whose ``__eq__`` cancelled
the run's task left ``harness.run`` as ``CancelledError``. A hook's ``Inject`` whose messages
are a generator cancelling the run's task did too (the lead's ``harness/kernel/_hooks.py``)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import calling_plain, plain

import harness
from harness.kernel import Deny, Inject


def _cancel() -> None:
    task = asyncio.current_task()
    assert task is not None
    task.cancel()


class _EqRaises:
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq boom")

    __hash__ = object.__hash__


class _EqCancels:
    def __eq__(self, other: object) -> bool:
        _cancel()
        return False

    __hash__ = object.__hash__


class _ReasonRaises(Deny):
    @property
    def reason(self) -> str:
        raise RuntimeError("reason boom")

    @reason.setter
    def reason(self, value: str) -> None:
        pass


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (_EqRaises, "RuntimeError: eq boom"),
        (lambda: _ReasonRaises("x"), "RuntimeError: reason boom"),
        (_EqCancels, "CancelledError: it cancelled its run's task"),
    ],
    ids=["eq-raises", "reason-raises", "eq-cancels"],
)
def test_a_can_use_tool_answer_that_cannot_be_read_is_its_crash(answer: Any, said: str) -> None:
    result = harness.run(
        "hi", tools=[plain], provider=calling_plain(), can_use_tool=lambda n, a, c: answer()
    )
    assert result.finish_reason == "error_halted"  # error_during_execution / raised before
    assert result.halted_reason == f"can_use_tool crashed: its answer cannot be read: {said}"


def _messages() -> Iterator[str]:
    _cancel()
    yield "hello"


def test_a_hook_answer_cancelling_the_runs_task_as_it_is_read_is_the_hooks_crash() -> None:
    messages: Any = _messages()
    hooks: Any = {"PreToolUse": [{"hooks": [lambda p, t: Inject(messages)]}]}
    result = harness.run("hi", tools=[plain], provider=calling_plain(), hooks=hooks)  # raises
    assert result.halted_reason == (
        "hook_crashed: PreToolUse: its answer cannot be read: CancelledError: it cancelled its "
        "run's task"
    )


class _ClassCancels:
    """An answer whose ``__class__``, asked by ``isinstance``, cancels the asking task."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        _cancel()
        return _ClassCancels


@pytest.mark.parametrize("where", ["can_use_tool", "PreToolUse"])
def test_an_answer_whose_class_cancels_the_runs_task_is_the_plug_ins_crash(where: str) -> None:
    options: dict[str, Any] = (
        {"can_use_tool": lambda n, a, c: _ClassCancels()}
        if where == "can_use_tool"
        else {"hooks": {"PreToolUse": [{"hooks": [lambda p, t: _ClassCancels()]}]}}
    )
    result = harness.run("hi", tools=[plain], provider=calling_plain(), **options)  # raised before
    crashed = "can_use_tool crashed" if where == "can_use_tool" else "hook_crashed: PreToolUse"
    assert result.halted_reason == f"{crashed}: CancelledError: it cancelled its run's task"
