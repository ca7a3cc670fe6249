"""Tool dispatch within one turn: serial before parallel, concurrency bounds, call order of results,
timeouts, crashes, unknown tools, invalid JSON and stopping the batch on finish."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any, Literal

import pytest

import harness
from harness import FinishReason, Submit, ToolError, tool
from harness.core import Message, ToolResult
from harness.events import ToolCallEvent
from harness.providers._mock import MockProvider


def calls_turn(
    *calls: tuple[str, dict[str, Any]] | tuple[str, dict[str, Any], str],
) -> dict[str, Any]:
    out = []
    for c in calls:
        entry: dict[str, Any] = {"name": c[0], "arguments": c[1]}
        if len(c) == 3:
            entry["id"] = c[2]
        out.append(entry)
    return {"tool_calls": out}


def results(messages: list[Message]) -> list[ToolResult]:
    return [m.tool_result for m in messages if m.role == "tool" and m.tool_result is not None]


def make_recorder(name: str, order: list[str], *, parallel_safe: bool) -> Any:
    async def fn(tag: str = "") -> str:
        order.append(name + tag)
        await asyncio.sleep(0)
        return f"{name}{tag} done"

    return tool(fn, name=name, parallel_safe=parallel_safe, read_only=parallel_safe)


# --- ordering ----------------------------------------------------------------------------------


async def test_serial_calls_run_first_in_model_order_then_parallel_ones() -> None:
    order: list[str] = []
    tools = [
        make_recorder("s1", order, parallel_safe=False),
        make_recorder("s2", order, parallel_safe=False),
        make_recorder("p1", order, parallel_safe=True),
        make_recorder("p2", order, parallel_safe=True),
    ]
    turn = calls_turn(
        ("p1", {}, "c1"),
        ("s2", {}, "c2"),
        ("p2", {}, "c3"),
        ("s1", {}, "c4"),
        ("s2", {"tag": "b"}, "c5"),
    )
    result = await harness.arun(
        "go", provider="mock", provider_opts={"turns": [turn, {"text": "ok"}]}, tools=tools
    )
    assert result.finish_reason is FinishReason.STOP
    assert order[:3] == ["s2", "s1", "s2b"]
    assert sorted(order[3:]) == ["p1", "p2"]
    rs = results(result.messages)
    assert [r.tool_call_id for r in rs] == ["c1", "c2", "c3", "c4", "c5"]
    assert [r.content for r in rs] == ["p1 done", "s2 done", "p2 done", "s1 done", "s2b done"]


async def test_results_come_back_in_call_order_when_parallel_calls_finish_out_of_order() -> None:
    # harness.tool(...) is annotated -> Any (harness/tools/_base.py): an untyped decorator to mypy
    @tool(parallel_safe=True, read_only=True)
    async def wait(ms: int) -> str:
        """Sleep for ms milliseconds."""
        await asyncio.sleep(ms / 1000)
        return f"slept {ms}"

    finished: list[int] = []

    def on_event(event: Any) -> None:
        if type(event).__name__ == "ToolResultEvent":
            finished.append(event.call.arguments["ms"])

    turn = calls_turn(("wait", {"ms": 60}), ("wait", {"ms": 1}), ("wait", {"ms": 30}))
    result = await harness.arun(
        "go",
        provider="mock",
        provider_opts={"turns": [turn, {"text": "ok"}]},
        tools=[wait],
        on_event=on_event,
    )
    assert finished == [1, 30, 60]
    assert [r.content for r in results(result.messages)] == ["slept 60", "slept 1", "slept 30"]
    assistant = next(m for m in result.messages if m.tool_calls)
    assert assistant.tool_calls is not None
    assert [r.tool_call_id for r in results(result.messages)] == [
        c.id for c in assistant.tool_calls
    ]


async def test_tool_call_events_mark_parallel_calls() -> None:
    order: list[str] = []
    events: list[ToolCallEvent] = []
    tools = [
        make_recorder("s", order, parallel_safe=False),
        make_recorder("p", order, parallel_safe=True),
    ]
    await harness.arun(
        "go",
        provider="mock",
        provider_opts={"turns": [calls_turn(("p", {}), ("s", {})), {"text": "ok"}]},
        tools=tools,
        on_event=lambda e: events.append(e) if isinstance(e, ToolCallEvent) else None,
    )
    assert [(e.call.name, e.parallel) for e in events] == [("s", False), ("p", True)]


# --- concurrency -------------------------------------------------------------------------------


async def test_parallel_safe_calls_run_concurrently() -> None:
    # Each call waits until all three have started: serial execution would time out.
    n = 3
    started: list[int] = []
    all_in = asyncio.Event()

    @tool(parallel_safe=True, read_only=True)
    async def barrier(i: int) -> str:
        """Wait for the others."""
        started.append(i)
        if len(started) == n:
            all_in.set()
        await all_in.wait()
        return f"through {i}"

    turn = calls_turn(*[("barrier", {"i": i}) for i in range(n)])
    # Run one at a time, each call would wait at the barrier until its timeout: an error result.
    result = await harness.arun(
        "go",
        provider="mock",
        provider_opts={"turns": [turn, {"text": "ok"}]},
        tools=[barrier],
        tool_timeout_s=1.0,
    )
    assert sorted(started) == [0, 1, 2]
    rs = results(result.messages)
    assert [r.content for r in rs] == ["through 0", "through 1", "through 2"]
    assert not any(r.is_error for r in rs)


async def test_serial_tools_do_not_run_concurrently() -> None:
    in_flight = 0
    peak = 0

    @tool
    async def step(i: int) -> str:
        """A serial step."""
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return f"step {i}"

    turn = calls_turn(*[("step", {"i": i}) for i in range(4)])
    result = await harness.arun(
        "go", provider="mock", provider_opts={"turns": [turn, {"text": "ok"}]}, tools=[step]
    )
    assert peak == 1
    assert [r.content for r in results(result.messages)] == [f"step {i}" for i in range(4)]


async def test_max_concurrency_bounds_calls_in_flight() -> None:
    in_flight = 0
    peak = 0

    @tool(parallel_safe=True, read_only=True)
    async def work(i: int) -> str:
        """Some concurrent work."""
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.02)
        in_flight -= 1
        return f"work {i}"

    turn = calls_turn(*[("work", {"i": i}) for i in range(5)])
    result = await harness.arun(
        "go",
        provider="mock",
        provider_opts={"turns": [turn, {"text": "ok"}]},
        tools=[work],
        max_concurrency=2,
    )
    assert peak == 2
    assert [r.content for r in results(result.messages)] == [f"work {i}" for i in range(5)]


async def test_parallel_safe_sync_function_tools_run_concurrently() -> None:
    # A plain (sync) @tool function marked parallel_safe must not block the event loop: three
    # calls meet at a thread barrier, which breaks (BrokenBarrierError) if they run one by one.
    barrier = threading.Barrier(3, timeout=0.5)

    @tool(parallel_safe=True, read_only=True)
    def meet(i: int) -> str:
        """Wait at the barrier."""
        barrier.wait()
        return f"met {i}"

    turn = calls_turn(*[("meet", {"i": i}) for i in range(3)])
    result = await harness.arun(
        "go", provider="mock", provider_opts={"turns": [turn, {"text": "ok"}]}, tools=[meet]
    )
    assert [r.content for r in results(result.messages)] == ["met 0", "met 1", "met 2"]


async def test_a_blocking_sync_tool_is_bounded_by_the_timeout() -> None:
    @tool
    def blocking(ms: int) -> str:
        """Blocks the calling thread."""
        time.sleep(ms / 1000)
        return f"slept {ms}"

    result = await harness.arun(
        "go",
        provider="mock",
        provider_opts={"turns": [calls_turn(("blocking", {"ms": 300})), {"text": "ok"}]},
        tools=[blocking],
        tool_timeout_s=0.05,
    )
    (r,) = results(result.messages)
    assert r.is_error
    assert r.content == "error: tool call 'blocking' timed out after 0.05s"


async def test_the_timeout_is_per_call_not_counting_the_wait_for_a_slot() -> None:
    @tool(parallel_safe=True, read_only=True)
    async def chunk(i: int) -> str:
        """Takes 60 ms."""
        await asyncio.sleep(0.06)
        return f"chunk {i}"

    turn = calls_turn(*[("chunk", {"i": i}) for i in range(3)])
    result = await harness.arun(
        "go",
        provider="mock",
        provider_opts={"turns": [turn, {"text": "ok"}]},
        tools=[chunk],
        max_concurrency=1,
        tool_timeout_s=0.5,
    )
    rs = results(result.messages)
    assert [r.content for r in rs] == ["chunk 0", "chunk 1", "chunk 2"]
    assert not any(r.is_error for r in rs)


# --- failures become error results -------------------------------------------------------------


@pytest.mark.parametrize("on_tool_timeout", ["tell_model", "end_run"])
async def test_a_tool_raising_its_own_timeout_error_is_a_crash_told_to_the_model(
    on_tool_timeout: Literal["tell_model", "end_run"],
) -> None:
    """Adversary round 10: a tool raising ``TimeoutError("mine")`` at once was taken for the
    kernel's own timeout: "did not finish within 60 s", untrue, and with ``end_run`` the cell
    ended as an infrastructure error though the tool's failure is the model's to see."""

    @tool
    async def impatient() -> str:
        """Gives up at once."""
        raise TimeoutError("upstream did not answer")

    p = MockProvider([calls_turn(("impatient", {})), {"text": "moving on"}])
    result = await harness.arun(
        "go", provider=p, tools=[impatient], tool_timeout_s=60, on_tool_timeout=on_tool_timeout
    )
    assert result.finish_reason is FinishReason.STOP, result.halted_reason
    (crashed,) = results(result.messages)
    assert crashed.is_error
    assert crashed.content == "error: tool crashed: TimeoutError: upstream did not answer"


async def test_a_tool_exceeding_the_timeout_becomes_an_error_and_the_run_continues() -> None:
    cancelled: list[bool] = []

    @tool
    async def slow() -> str:
        """Too slow."""
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return "never"

    @tool
    def fast() -> str:
        """Quick."""
        return "quick"

    p = MockProvider([calls_turn(("slow", {}), ("fast", {})), {"text": "moving on"}])
    result = await harness.arun("go", provider=p, tools=[slow, fast], tool_timeout_s=0.5)
    assert cancelled == [True]  # stopped at its timeout, not waited for
    assert result.finish_reason is FinishReason.STOP
    assert result.text == "moving on"
    timed_out, quick = results(result.messages)
    assert timed_out.is_error
    assert timed_out.content == "error: tool call 'slow' timed out after 0.5s"
    assert not quick.is_error
    assert quick.content == "quick"
    assert p.requests[1].messages[-2].content == timed_out.content


async def test_a_parallel_tool_exceeding_the_timeout_does_not_block_the_others() -> None:
    never = asyncio.Event()

    @tool(parallel_safe=True, read_only=True)
    async def nap(forever: bool) -> str:
        """Wait for ever, or not at all."""
        if forever:
            await never.wait()
        return f"napped {forever}"

    turn = calls_turn(("nap", {"forever": True}), ("nap", {"forever": False}))
    result = await harness.arun(
        "go",
        provider="mock",
        provider_opts={"turns": [turn, {"text": "ok"}]},
        tools=[nap],
        tool_timeout_s=1.0,  # ample for the quick call on a loaded machine
    )
    a, b = results(result.messages)
    assert a.is_error
    assert a.content == "error: tool call 'nap' timed out after 1s"
    assert not b.is_error
    assert b.content == "napped False"


def test_a_raising_tool_becomes_a_crash_error_result() -> None:
    @tool
    def explode() -> str:
        """Raises."""
        raise RuntimeError("kaboom")

    result = harness.run(
        "go",
        provider="mock",
        provider_opts={"turns": [calls_turn(("explode", {})), {"text": "ok"}]},
        tools=[explode],
    )
    assert result.finish_reason is FinishReason.STOP
    (r,) = results(result.messages)
    assert r.is_error
    assert r.content == "error: tool crashed: RuntimeError: kaboom"


def test_a_raising_parallel_tool_becomes_a_crash_error_result() -> None:
    @tool(parallel_safe=True, read_only=True)
    def pexplode(i: int) -> str:
        """Raises for odd i."""
        if i % 2:
            raise KeyError(i)
        return f"fine {i}"

    result = harness.run(
        "go",
        provider="mock",
        provider_opts={
            "turns": [calls_turn(("pexplode", {"i": 0}), ("pexplode", {"i": 1})), {"text": "ok"}]
        },
        tools=[pexplode],
    )
    a, b = results(result.messages)
    assert not a.is_error
    assert a.content == "fine 0"
    assert b.is_error
    assert b.content == "error: tool crashed: KeyError: 1"


def test_tool_error_becomes_a_plain_error_result() -> None:
    @tool
    def picky() -> str:
        """Refuses."""
        raise ToolError("file not found: x.txt")

    result = harness.run(
        "go",
        provider="mock",
        provider_opts={"turns": [calls_turn(("picky", {})), {"text": "ok"}]},
        tools=[picky],
    )
    (r,) = results(result.messages)
    assert r.is_error
    assert r.content == "error: file not found: x.txt"


def test_invalid_arguments_for_a_function_tool_are_a_tool_error() -> None:
    @tool
    def typed(n: int) -> str:
        """Needs an int."""
        return str(n)

    result = harness.run(
        "go",
        provider="mock",
        provider_opts={"turns": [calls_turn(("typed", {"n": "abc"})), {"text": "ok"}]},
        tools=[typed],
    )
    (r,) = results(result.messages)
    assert r.is_error
    assert r.content.startswith("error: invalid arguments for typed: n:")


def test_unknown_tool_lists_available_tools_and_suggests_a_near_name() -> None:
    @tool
    def search_docs(q: str = "") -> str:
        """Search."""
        return "found"

    @tool
    def write_note(text: str = "") -> str:
        """Write."""
        return "written"

    p = MockProvider(
        [calls_turn(("search_doc", {}), ("qqqqqq", {})), {"text": "ok"}],
    )
    result = harness.run("go", provider=p, tools=[write_note, search_docs])
    near, far = results(result.messages)
    assert near.is_error
    assert far.is_error
    assert near.content == (
        "error: unknown tool: search_doc. Available tools: search_docs, write_note. "
        'Did you mean "search_docs"?'
    )
    assert far.content == "error: unknown tool: qqqqqq. Available tools: search_docs, write_note."


def test_unknown_tool_with_no_tools_says_so() -> None:
    result = harness.run(
        "go",
        provider="mock",
        provider_opts={"turns": [calls_turn(("anything", {})), {"text": "ok"}]},
        tools=None,
    )
    (r,) = results(result.messages)
    assert r.content == "error: unknown tool: anything. No tools are available."


def test_invalid_json_arguments_get_a_repair_message_and_the_tool_does_not_run() -> None:
    ran: list[str] = []

    @tool
    def target(x: int = 0) -> str:
        """Target."""
        ran.append("yes")
        return "ran"

    p = MockProvider([{"tool_calls": [{"name": "target", "arguments": '{"x": 1'}]}, {"text": "ok"}])
    result = harness.run("go", provider=p, tools=[target])
    assert ran == []
    (r,) = results(result.messages)
    assert r.is_error
    assert r.content == (
        "error: tool arguments were not valid JSON: '{\"x\": 1'. "
        "Re-send the target call with corrected JSON arguments."
    )
    assert p.requests[1].messages[-1].content == r.content


# --- halting the batch -------------------------------------------------------------------------


def test_finish_after_a_serial_call_stops_the_rest_of_the_turn() -> None:
    order: list[str] = []
    tools = [
        make_recorder("s1", order, parallel_safe=False),
        make_recorder("s2", order, parallel_safe=False),
        make_recorder("p1", order, parallel_safe=True),
        "finish",
    ]
    turn = calls_turn(
        ("p1", {}),
        ("s1", {}),
        ("finish", {"deliverable": {"answer": 42}}),
        ("s2", {}),
    )
    p = MockProvider([turn, {"text": "never"}])
    result = harness.run("go", provider=p, tools=tools)
    assert result.finish_reason is FinishReason.SUBMITTED
    assert result.deliverable == {"answer": 42}
    assert order == ["s1"]
    assert len(p.requests) == 1
    assert [r.content for r in results(result.messages)] == ["s1 done"]
    assert result.tool_calls_made == 0  # a halted turn's calls are not counted (ExAthena)


def test_submit_from_a_parallel_call_ends_the_run() -> None:
    @tool(parallel_safe=True, read_only=True)
    def psubmit(v: int) -> Any:
        """Submit v."""
        return Submit(v)

    order: list[str] = []
    turn = calls_turn(("s1", {}), ("psubmit", {"v": 7}))
    result = harness.run(
        "go",
        provider="mock",
        provider_opts={"turns": [turn, {"text": "never"}]},
        tools=[make_recorder("s1", order, parallel_safe=False), psubmit],
    )
    assert result.finish_reason is FinishReason.SUBMITTED
    assert result.deliverable == 7
    assert order == ["s1"]


async def test_on_tool_timeout_end_run_makes_the_expiry_an_infrastructure_error() -> None:
    """Issue 33.5: a wall-clock expiry depends on the machine's load; with ``end_run`` (what the
    bench uses) the model never sees it: the run ends ``error_during_execution``. Under load 21
    a replayed mock cell was told "tool call 'grep' timed out after 60s" and its tokens
    differed from a quiet replay's."""

    @tool
    async def nap() -> str:
        """Sleeps past the limit."""
        await asyncio.sleep(5)
        return "rested"

    turns = [calls_turn(("nap", {})), {"text": "carried on"}]
    told = await harness.arun(
        "go", provider="mock", provider_opts={"turns": turns}, tools=[nap], tool_timeout_s=0.2
    )
    assert [r.content for r in results(told.messages)] == [
        "error: tool call 'nap' timed out after 0.2s"
    ]
    assert told.text == "carried on"
    ended = await harness.arun(
        "go",
        provider="mock",
        provider_opts={"turns": turns},
        tools=[nap],
        tool_timeout_s=0.2,
        on_tool_timeout="end_run",
    )
    assert ended.finish_reason == FinishReason.ERROR_DURING_EXECUTION
    assert ended.halted_reason is not None
    assert "ToolSafetyNet" in ended.halted_reason
    assert "did not finish within 0.2 s" in ended.halted_reason
    assert results(ended.messages) == []  # nothing about the expiry reached the model
    assert ended.text != "carried on"
