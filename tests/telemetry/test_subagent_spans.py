"""Sub-agent spans: each child's trace nests under the execute_tool span that spawned it, and
parallel spawns get their own parents."""

from __future__ import annotations

import asyncio
from typing import Any

import harness
from harness.providers._mock import MockProvider
from harness.telemetry import _conventions as c


def test_parallel_spawns_nest_under_their_own_tool_spans(provider: Any, spans: Any) -> None:
    mock = MockProvider(
        [
            {
                "tool_calls": [
                    {"id": "call_a", "name": "spawn_agent", "arguments": {"prompt": "part A"}},
                    {"id": "call_b", "name": "spawn_agent", "arguments": {"prompt": "part B"}},
                ]
            },
            {"tool_calls": [{"name": "calculator", "arguments": {"expression": "1+1"}}]},
            {"text": "A done"},
            {"text": "B done"},
            {"text": "both done"},
        ]
    )

    async def yield_once(payload: dict[str, Any], _id: Any) -> None:
        await asyncio.sleep(0.01)  # both tool spans are open before either child starts

    result = harness.run(
        "split it",
        provider=mock,
        tools=["spawn_agent", "calculator"],
        tracer_provider=provider,
        hooks={"PreToolUse": [{"matcher": "spawn_agent", "hooks": [yield_once]}]},
    )
    assert result.finish_reason == harness.FinishReason.STOP
    t = spans()
    tools = {t.attrs(s)[c.GEN_AI_TOOL_CALL_ID]: s for s in t.named("execute_tool spawn_agent")}
    assert set(tools) == {"call_a", "call_b"}
    subs = t.named(c.SPAN_SUBAGENT)
    assert len(subs) == 2
    by_parent = {t.parent(s).context.span_id: s for s in subs}
    assert set(by_parent) == {s.context.span_id for s in tools.values()}
    main_root = next(s for s in t.roots())
    assert main_root.name == "invoke_agent react"
    for call_id, tool_span in tools.items():
        sub = by_parent[tool_span.context.span_id]
        children = t.children(sub)
        # The child's own run is one traced agent under its sub-agent span.
        assert t.names(children) == ["invoke_agent react"], call_id
        child_root = children[0]
        chats = [s for s in t.spans if s.name.startswith("chat") and _under(t, s, child_root)]
        assert chats, call_id
        assert all(s.context.trace_id == main_root.context.trace_id for s in chats)
    # The child that used the calculator has its tool span inside its own trace branch.
    calc = t.one("execute_tool calculator")
    assert any(_under(t, calc, by_parent[s.context.span_id]) for s in tools.values())
    # Only the parent's own calls are chat spans under the parent's iterations.
    top_chats = [s for s in t.named("chat") if t.parent(s) in t.named("iteration")
                 and t.parent(t.parent(s)) is main_root]  # fmt: skip
    assert len(top_chats) == 2


def _under(t: Any, span: Any, ancestor: Any) -> bool:
    p = t.parent(span)
    while p is not None:
        if p.context.span_id == ancestor.context.span_id:
            return True
        p = t.parent(p)
    return False
