"""Shared helpers for the kernel tests: scripted mock turns and an event recorder."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

import harness
from harness.events import Done, Event, Submitted, ToolCallEvent, ToolResultEvent, ToolUI
from harness.providers._mock import MockProvider


def call(name: str, /, **arguments: Any) -> dict[str, Any]:
    """One scripted tool call."""
    return {"name": name, "arguments": arguments}


def tool_turn(*calls: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A main turn asking for ``calls``."""
    return {"tool_calls": list(calls), **extra}


def text(content: str, **extra: Any) -> dict[str, Any]:
    """A turn answering with ``content``."""
    return {"text": content, **extra}


def error(status: int, message: str = "mock error", **extra: Any) -> dict[str, Any]:
    """A turn that fails like an HTTP error with ``status``."""
    return {"error": {"status": status, "message": message}, **extra}


def script(*turns: dict[str, Any], when_exhausted: str = "error", **extra: Any) -> dict[str, Any]:
    """``provider_opts`` for the mock provider."""
    return {"turns": list(turns), "when_exhausted": when_exhausted, **extra}


def mock(*turns: dict[str, Any], when_exhausted: str = "error", **kw: Any) -> MockProvider:
    """A mock provider object (passed as ``provider=``) so a test can read ``.requests``."""
    return MockProvider(list(turns), when_exhausted=when_exhausted, **kw)


def answered(event: str, answer: Callable[[], Any]) -> harness.Result:
    """A run of one calculator call and an answer, with one hook on ``event`` answering
    ``answer()`` each time it fires."""

    def hook(payload: dict[str, Any], tool_use_id: str | None = None) -> Any:
        return answer()

    turns = [tool_turn(call("calculator", expression="1+1")), text("ok")]
    return harness.run("hi", provider=mock(*turns), tools=["calculator"], hooks={event: [hook]})


@harness.tool
def plain(x: str) -> str:
    """Answers."""
    return "ok"


def calling_plain() -> MockProvider:
    """A mock that calls :func:`plain` once, then answers "done"."""
    return MockProvider(
        turns=[{"tool_calls": [{"name": "plain", "arguments": {"x": "y"}}]}, {"text": "done"}]
    )


class Answers:
    """A plug-in provider answering ``answer`` to every call (after sending ``deltas``, each a
    ``(kind, text)`` given to ``on_delta``): how a test hands the kernel what no real provider
    would."""

    name = "answers"
    model = "m"

    def __init__(self, answer: Any, streaming: bool = False, deltas: Any = ()) -> None:
        self.answer, self.deltas = answer, deltas
        caps = MockProvider(turns=[{"text": "x"}]).capabilities
        self.capabilities = dataclasses.replace(caps, streaming=streaming)

    async def complete(self, request: Any, on_delta: Any = None) -> Any:
        for kind, text in self.deltas:
            on_delta(kind, text)
        return self.answer

    async def aclose(self) -> None:
        pass


class Recorder(list[Event]):
    """An ``on_event`` subscriber that keeps every event."""

    def __call__(self, event: Event) -> None:
        self.append(event)

    def of(self, cls: type | tuple[type, ...]) -> list[Any]:
        return [e for e in self if isinstance(e, cls)]

    def kinds(self) -> list[str]:
        return [type(e).__name__ for e in self]

    def first_index(self, cls: type, where: Any = None) -> int:
        for i, e in enumerate(self):
            if isinstance(e, cls) and (where is None or where(e)):
                return i
        raise AssertionError(f"no {cls.__name__} event")


@pytest.fixture
def events() -> Recorder:
    return Recorder()


def assert_stream_invariants(evs: list[Event]) -> None:
    """The ordering guarantees of docs/kernel.md (events), checked over a whole event stream."""
    done_at = [i for i, e in enumerate(evs) if isinstance(e, Done)]
    assert done_at == [len(evs) - 1], f"Done must be last and exactly once: {done_at} of {len(evs)}"
    for i, e in enumerate(evs):
        if isinstance(e, ToolResultEvent):
            calls = [
                j
                for j, x in enumerate(evs[:i])
                if isinstance(x, ToolCallEvent) and x.call.id == e.call.id
            ]
            assert len(calls) == 1, f"result {e.call.id} needs exactly one earlier ToolCallEvent"
        elif isinstance(e, ToolUI):
            results = [
                j
                for j, x in enumerate(evs[:i])
                if isinstance(x, ToolResultEvent) and x.call.id == e.tool_call_id
            ]
            assert len(results) == 1, f"ToolUI {e.tool_call_id} must follow its result"
        elif isinstance(e, Submitted):
            assert i == len(evs) - 2, "Submitted must come immediately before Done"
