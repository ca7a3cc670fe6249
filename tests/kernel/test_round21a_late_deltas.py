"""A plug-in provider calling ``on_delta`` after its call returned (issue 34, adversary round
21, part A).

A provider may keep the ``on_delta`` it was given (a background task of its own, a callback
its client calls later): its text reached the run's subscribers after the run's ``Done``
(``[..., 'Done', 'Content:LATE']``; ``Done`` is the run's last event), or in the middle of
another call, as that call's streamed text. Deltas are taken while their call runs only."""

from __future__ import annotations

import asyncio
from typing import Any

import harness
from harness.providers._base import Capabilities, Response


class _Lingering:
    """Streams ``hi``; its first call also streams ``LATE`` from a task of its own, once the
    call has returned; with ``calls=2`` its second call takes 0.3 s (the ``LATE`` comes then)."""

    name = "lingering"
    model = "m"
    capabilities = Capabilities(streaming=True)

    def __init__(self, calls: int = 1) -> None:
        self.calls = calls
        self.made = 0
        self.tasks: list[asyncio.Task[None]] = []

    async def complete(self, request: Any, on_delta: Any = None) -> Response:
        self.made += 1
        on_delta("content", "hi")
        if self.made == 1:

            async def late() -> None:
                await asyncio.sleep(0.1)
                on_delta("content", "LATE")

            self.tasks.append(asyncio.get_running_loop().create_task(late()))
        if self.made < self.calls:
            call = harness.ToolCall(id="1", name="calculator", arguments={"expression": "1+1"})
            return Response(tool_calls=[call])
        if self.calls > 1:
            await asyncio.sleep(0.3)
        return Response(text="hi")

    async def aclose(self) -> None:
        pass


def _events(provider: _Lingering, **options: Any) -> list[str]:
    events: list[str] = []

    def seen(event: Any) -> None:
        text = getattr(event, "text", None)
        events.append(type(event).__name__ + (f":{text}" if isinstance(text, str) else ""))

    async def main() -> None:
        await harness.arun("hi", provider=provider, on_event=seen, **options)
        await asyncio.sleep(0.3)  # the provider's task runs on after the run

    asyncio.run(main())
    return events


def test_a_delta_after_the_runs_done_is_not_delivered() -> None:
    events = _events(_Lingering())
    assert events[-1] == "Done", events  # [..., 'Done', 'Content:LATE'] on 84cec7a
    assert "Content:LATE" not in events


def test_a_delta_from_an_earlier_call_is_not_the_next_calls_text() -> None:
    events = _events(_Lingering(calls=2), tools=["calculator"])
    assert "Content:LATE" not in events, events
