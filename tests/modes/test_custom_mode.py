"""User-written modes: resolution from a class or an instance, the productivity_signal override,
rejection of objects that are not modes, and resolve_mode on the builtin names."""

from __future__ import annotations

from typing import Any

import pytest

import harness
from harness import ConfigError, Continue, FinishReason, Halt, Message
from harness.kernel._calls import build_request, call_provider
from harness.kernel._progress import ProgressSnapshot
from harness.kernel._state import State
from harness.modes._base import resolve_mode
from harness.modes._plan_and_solve import PlanAndSolve
from harness.modes._react import ReAct
from harness.modes._reflexion import Reflexion
from harness.providers._mock import MockProvider


class EchoTwice:
    """Asks the provider twice (no tools), then halts as stop."""

    name = "echo_twice"

    def init(self, state: State) -> None:
        state.mode_state = {"calls": 0}

    async def iterate(self, state: State) -> Continue | Halt:
        request = build_request(state, state.messages, with_tools=False)
        response, _ = await call_provider(state, request)
        state.messages.append(Message.assistant(response.text))
        state.mode_state["calls"] += 1
        if state.mode_state["calls"] >= 2:
            state.halt(FinishReason.STOP)
            return Halt()
        return Continue()


class Idle:
    """Does nothing and continues: only the kernel caps can end the run."""

    name = "idle"

    def init(self, state: State) -> None:
        return None

    async def iterate(self, state: State) -> Continue:
        return Continue()


class AlwaysUnproductive(Idle):
    name = "always_unproductive"

    def __init__(self) -> None:
        self.seen: list[tuple[int, int]] = []

    def productivity_signal(self, prev: ProgressSnapshot, state: State) -> bool:
        self.seen.append((prev.iterations, state.iterations))
        return False


class AlwaysProductive(Idle):
    name = "always_productive"

    def productivity_signal(self, prev: ProgressSnapshot, state: State) -> bool:
        return True


# --- resolution --------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", [EchoTwice, EchoTwice()], ids=["class", "instance"])
def test_a_custom_mode_runs_from_a_class_or_an_instance(spec: Any) -> None:
    p = MockProvider([{"text": "one"}, {"text": "two"}])
    result = harness.run("hi", provider=p, mode=spec, tools=["calculator"])
    assert result.finish_reason is FinishReason.STOP
    assert result.mode == "echo_twice"
    assert result.text == "two"
    assert result.iterations == 1  # the halting iteration is not counted
    assert [r.tools for r in p.requests] == [None, None]
    assert [len(r.messages) for r in p.requests] == [1, 2]
    assert result.llm_calls == 2


def test_one_mode_instance_serves_several_runs() -> None:
    mode = EchoTwice()
    for _ in range(2):
        result = harness.run(
            "hi",
            provider="mock",
            provider_opts={"turns": [{"text": "a"}, {"text": "b"}]},
            mode=mode,
        )
        assert result.finish_reason is FinishReason.STOP
        assert result.text == "b"


async def test_async_init_is_awaited() -> None:
    class AsyncInit(EchoTwice):
        name = "async_init"

        async def init(self, state: State) -> None:  # type: ignore[override]
            state.mode_state = {"calls": 1}

    result = await harness.arun(
        "hi", provider="mock", provider_opts={"turns": [{"text": "only"}]}, mode=AsyncInit
    )
    assert result.finish_reason is FinishReason.STOP
    assert result.llm_calls == 1


def test_a_mode_halting_without_a_reason_ends_as_stop() -> None:
    class Quit(Idle):
        name = "quit"

        async def iterate(self, state: State) -> Halt:  # type: ignore[override]
            return Halt()

    result = harness.run("hi", provider="mock", mode=Quit)
    assert result.finish_reason is FinishReason.STOP
    assert result.iterations == 0


def test_a_mode_returning_something_else_is_an_execution_error() -> None:
    class Wrong(Idle):
        name = "wrong"

        async def iterate(self, state: State) -> Any:
            return "continue"

    result = harness.run("hi", provider="mock", mode=Wrong)
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert result.halted_reason is not None
    assert "mode 'wrong' returned 'continue'" in result.halted_reason


def test_a_mode_raising_is_an_execution_error() -> None:
    class Crash(Idle):
        name = "crash"

        async def iterate(self, state: State) -> Any:
            raise LookupError("lost")

    result = harness.run("hi", provider="mock", mode=Crash)
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert result.halted_reason == "LookupError: lost"


# --- productivity_signal -----------------------------------------------------------------------


def test_productivity_signal_override_is_used() -> None:
    mode = AlwaysUnproductive()
    result = harness.run("hi", provider="mock", mode=mode, max_iterations=20)
    assert result.finish_reason is FinishReason.ERROR_NO_PROGRESS
    # The override says even the first iteration was unproductive: trip after 3, not 4.
    assert result.iterations == 3
    assert mode.seen == [(0, 0), (1, 1), (2, 2)]


def test_without_an_override_the_kernel_default_applies() -> None:
    result = harness.run("hi", provider="mock", mode=Idle, max_iterations=20)
    assert result.finish_reason is FinishReason.ERROR_NO_PROGRESS
    assert result.iterations == 4


def test_an_always_productive_override_runs_to_max_iterations() -> None:
    result = harness.run("hi", provider="mock", mode=AlwaysProductive, max_iterations=9)
    assert result.finish_reason is FinishReason.ERROR_MAX_TURNS
    assert result.iterations == 9


# --- bad mode objects --------------------------------------------------------------------------


class NoIterate:
    name = "no_iterate"

    def init(self, state: State) -> None:
        return None


class NoInit:
    name = "no_init"

    async def iterate(self, state: State) -> Continue:
        return Continue()


class NoName:
    def init(self, state: State) -> None:
        return None

    async def iterate(self, state: State) -> Continue:
        return Continue()


class IntName(NoName):
    name = 7


class NeedsArgs(Idle):
    name = "needs_args"

    def __init__(self, required: int) -> None:
        self.required = required


class SyncIterate:
    name = "sync_iterate"

    def init(self, state: State) -> None:
        return None

    def iterate(self, state: State) -> Continue:
        return Continue()


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        (NoIterate(), "is not a Mode"),
        (NoInit(), "is not a Mode"),
        (NoName(), "needs a 'name' string"),
        (IntName(), "needs a 'name' string"),
        (NeedsArgs, "cannot instantiate NeedsArgs()"),
        (42, "is not a Mode"),
        (None, "is not a Mode"),
        (object(), "is not a Mode"),
        ("reactt", "did you mean 'react'"),
        ("orchestrat", "did you mean 'orchestrate'"),
    ],
)
def test_bad_modes_are_config_errors(spec: Any, needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        resolve_mode(spec)
    assert needle in str(info.value)
    assert str(info.value).startswith("mode:")


def test_a_bad_mode_fails_run_before_any_provider_call() -> None:
    p = MockProvider([{"text": "never"}])
    with pytest.raises(ConfigError, match="is not a Mode"):
        harness.run("hi", provider=p, mode=NoIterate())
    assert p.requests == []


def test_a_sync_iterate_is_rejected_as_config_error() -> None:
    # The protocol (and resolve_mode's own message) requires `async iterate(state)`.
    p = MockProvider([{"text": "never"}])
    with pytest.raises(ConfigError, match="async"):
        harness.run("hi", provider=p, mode=SyncIterate)
    assert p.requests == []


# --- resolve_mode on names ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "cls", "name"),
    [
        ("react", ReAct, "react"),
        ("  ReAct ", ReAct, "react"),
        ("plan_and_solve", PlanAndSolve, "plan_and_solve"),
        ("plan-and-solve", PlanAndSolve, "plan_and_solve"),
        ("plan", PlanAndSolve, "plan_and_solve"),
        ("reflexion", Reflexion, "reflexion"),
    ],
)
def test_resolve_mode_builtin_names(spec: str, cls: type, name: str) -> None:
    mode = resolve_mode(spec)
    assert type(mode) is cls
    assert mode.name == name


def test_resolve_mode_gives_fresh_builtin_instances() -> None:
    assert resolve_mode("react") is not resolve_mode("react")


@pytest.mark.parametrize(("given", "expected"), [(0, 0), (2, 2), (3, 3), (10, 3)])
def test_reflexion_takes_max_reflections_from_constructor_or_run_option(
    given: int, expected: int
) -> None:
    mode = resolve_mode("reflexion")
    assert isinstance(mode, Reflexion)
    assert mode.max_reflections is None  # the run option decides
    turns = [
        {"tool_calls": [{"name": "calculator", "arguments": {"expression": f"{i}+1"}}]}
        for i in range(5)
    ] + [{"text": "done"}]
    by_option = harness.run(
        "q",
        provider="mock",
        tools=["calculator"],
        mode="reflexion",
        max_reflections=given,
        provider_opts={"turns": turns},
    )
    by_class = harness.run(
        "q",
        provider="mock",
        tools=["calculator"],
        mode=Reflexion(max_reflections=given),
        provider_opts={"turns": turns},
    )
    for result in (by_option, by_class):
        assert [c.purpose for c in result.calls].count("reflect") == expected


def test_resolve_mode_returns_an_instance_unchanged_and_instantiates_a_class() -> None:
    inst = EchoTwice()
    assert resolve_mode(inst) is inst
    made = resolve_mode(EchoTwice)
    assert isinstance(made, EchoTwice)
    assert isinstance(made, harness.Mode)
