"""The light tracer against the SDK: the same scripted runs traced both ways (the SDK with the
same JSON-lines file exporter) give the same span trees and, ids and times aside, the same lines;
the light file reads back and shows; concurrent runs never mix; ids are valid."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import harness
from harness import Message, ToolError, ToolOutput, UIPayload, tool
from harness.cli import main
from harness.events import SubagentResult, SubagentSpawn
from harness.telemetry import _conventions as c
from harness.telemetry import configure_tracing, read_spans
from harness.telemetry._readspans import SpanRecord, iter_span_lines

# --- tools and scripted runs --------------------------------------------------------------------


@tool
def lookup(k: int = 0) -> str:
    """Look something up."""
    return f"value {k}"


# harness.tool(...) is annotated -> Any (harness/tools/_base.py): an untyped decorator to mypy
@tool(parallel_safe=True)
async def slow(ms: int = 5, tag: str = "") -> str:
    """Wait, then answer."""
    await asyncio.sleep(ms / 1000)
    return f"slept {ms} {tag}"


@tool
def broken() -> str:
    """Always fails."""
    raise ToolError("nope")


@tool
def show() -> ToolOutput:
    """Return a preview."""
    return ToolOutput("shown", UIPayload("diff", {"lines": 3}))


def tool_turn(*calls: tuple[str, dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": n, "arguments": a} for n, a in calls], **extra}


def opts(*turns: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"turns": list(turns), **extra}


Run = Callable[[Any], list[harness.Result]]


def react(p: Any) -> list[harness.Result]:
    return [
        harness.run(
            "q",
            provider="mock",
            tools=[lookup],
            provider_opts=opts(
                tool_turn(("lookup", {"k": 1}), text="let me see"),
                tool_turn(("lookup", {"k": 2})),
                {"text": "the answer", "usage": {"input_tokens": 50, "output_tokens": 7}},
            ),
            tracer_provider=p,
            trace_attributes={"suite": "smoke", "task": "t1", "epoch": 2, "score.x": 1.5},
        )
    ]


def plan_and_solve(p: Any) -> list[harness.Result]:
    return [
        harness.run(
            "q",
            provider="mock",
            tools=[lookup],
            mode="plan_and_solve",
            provider_opts=opts(
                {"text": "1. look 2. answer", "for": "plan"},
                tool_turn(("lookup", {"k": 1})),
                {"text": "done", "thinking": "hmm", "cost_usd": 0.002},
            ),
            tracer_provider=p,
        )
    ]


def reflexion(p: Any) -> list[harness.Result]:
    return [
        harness.run(
            "q",
            provider="mock",
            tools=[show, broken, "finish"],
            mode="reflexion",
            provider_opts=opts(
                tool_turn(("show", {}), ("broken", {})),
                tool_turn(("finish", {"deliverable": "the goods"})),
                {"error": {"status": 500, "message": "down"}, "for": "reflect"},
            ),
            tracer_provider=p,
        ),
        harness.run(
            "q",
            provider="mock",
            tools=[lookup],
            mode="reflexion",
            capture_content=False,
            provider_opts=opts(
                tool_turn(("lookup", {"k": 1})),
                {"text": "final answer here", "thinking": "deep thoughts"},
                {"text": "critique one", "for": "reflect"},
                stream=True,
            ),
            tracer_provider=p,
        ),
    ]


def parallel(p: Any) -> list[harness.Result]:
    return [
        harness.run(
            "q",
            provider="mock",
            tools=[slow],
            provider_opts=opts(
                tool_turn(("slow", {"ms": 20, "tag": "a"}), ("slow", {"ms": 5, "tag": "b"})),
                {"text": "done"},
            ),
            tracer_provider=p,
        )
    ]


def errors(p: Any) -> list[harness.Result]:
    return [
        harness.run(
            "q",
            provider="mock",
            provider_opts=opts({"error": {"status": 401, "message": "bad key"}}),
            tracer_provider=p,
        ),
        harness.run(
            "q",
            provider="mock",
            tools=[lookup],
            max_iterations=1,
            provider_opts=opts(tool_turn(("lookup", {})), {"text": "never"}),
            tracer_provider=p,
        ),
        harness.extract_structured(
            "city?",
            schema={"type": "object", "required": ["city"]},
            provider="mock",
            provider_opts=opts(
                {"text": "not json", "for": "structured"},
                {"text": '{"city": "Oslo"}', "for": "structured"},
            ),
            tracer_provider=p,
        ),
    ]


def compaction(p: Any) -> list[harness.Result]:
    history = [
        Message.user(f"{i}:" + "u" * 400) if i % 2 == 0 else Message.assistant(f"{i}:" + "a" * 400)
        for i in range(12)
    ]
    return [
        harness.run(
            messages=history,
            provider="mock",
            provider_opts=opts(
                {"text": "summary", "for": "compact"}, {"text": "final"}, context_window=2000
            ),
            tracer_provider=p,
        )
    ]


def subagent(p: Any) -> list[harness.Result]:
    @tool
    async def delegate(ctx: harness.ToolContext) -> str:
        """Run a sub-agent."""
        assert ctx.emit is not None
        ctx.emit(SubagentSpawn("sub-1", "inner task"))
        inner = await harness.arun(
            "inner task", provider="mock", provider_opts=opts({"text": "inner"}), tracer_provider=p
        )
        ctx.emit(SubagentResult("sub-1", inner.text, inner.finish_reason.value))
        return inner.text or ""

    return [
        harness.run(
            "q",
            provider="mock",
            tools=[delegate],
            provider_opts=opts(tool_turn(("delegate", {})), {"text": "outer done"}),
            tracer_provider=p,
        )
    ]


RUNS: dict[str, Run] = {
    "react": react,
    "plan_and_solve": plan_and_solve,
    "reflexion_with_tools": reflexion,
    "parallel_tools": parallel,
    "errors": errors,
    "compaction": compaction,
    "subagent": subagent,
}

# --- comparing the two files ----------------------------------------------------------------------

_IDS = re.compile(r'"(traceId|spanId|parentSpanId)":"[0-9a-f]+"')
_TIMES = re.compile(r'"(startTimeUnixNano|endTimeUnixNano|timeUnixNano)":"\d+"')
_SESSION = re.compile(r'("key":"gen_ai\.conversation\.id","value":\{"stringValue":)"[^"]*"')


def traced(path: Path, run: Run, *, sdk: bool) -> list[harness.Result]:
    handle = configure_tracing(file=path, sdk=sdk)
    assert handle.light is not sdk
    try:
        return run(handle.provider)
    finally:
        handle.shutdown()


def normalized_lines(path: Path) -> list[str]:
    """The file's lines without ids, times and session ids (random per run), sorted."""
    text = path.read_text(encoding="utf-8")
    text = _TIMES.sub(lambda m: f'"{m.group(1)}":"T"', _IDS.sub(r'"\1":"ID"', text))
    return sorted(_SESSION.sub(r'\1"SESSION"', text).splitlines())


def canonical_trees(spans: list[SpanRecord]) -> list[str]:
    """Each trace as one JSON string: names, kinds, attributes, events, status, children (as a
    sorted multiset, so that start order does not matter), without ids and times."""
    children: dict[str | None, list[SpanRecord]] = {}
    for s in spans:
        children.setdefault(s.parent_span_id, []).append(s)

    def node(s: SpanRecord) -> Any:
        attrs = dict(s.attributes)
        attrs.pop(c.GEN_AI_CONVERSATION_ID, None)
        return {
            "name": s.name,
            "kind": s.kind,
            "attributes": attrs,
            "events": [(e.name, e.attributes) for e in s.events],
            "status": [s.status_code, s.status_message],
            "children": sorted(
                json.dumps(node(x), sort_keys=True) for x in children.get(s.span_id, [])
            ),
        }

    return sorted(json.dumps(node(s), sort_keys=True) for s in children.get(None, []))


@pytest.fixture(params=sorted(RUNS))
def both(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Any, ...]:
    run = RUNS[request.param]
    sdk_path, light_path = tmp_path / "sdk.jsonl", tmp_path / "light.jsonl"
    sdk_results = traced(sdk_path, run, sdk=True)
    light_results = traced(light_path, run, sdk=False)
    return sdk_path, sdk_results, light_path, light_results


def test_light_and_sdk_write_the_same_span_trees(both: tuple[Any, ...]) -> None:
    sdk_path, sdk_results, light_path, light_results = both
    sdk_spans, light_spans = read_spans(sdk_path), read_spans(light_path)
    assert len(light_spans) == len(sdk_spans) > 0
    assert canonical_trees(light_spans) == canonical_trees(sdk_spans)
    # One trace per top-level run, and each result names its trace.
    for spans, results in ((sdk_spans, sdk_results), (light_spans, light_results)):
        assert {s.trace_id for s in spans} == {r.trace_id for r in results}


def test_light_and_sdk_write_the_same_lines(both: tuple[Any, ...]) -> None:
    """Byte for byte once ids and times are masked: field order, encodings, resource, scope."""
    sdk_path, _, light_path, _ = both
    light = normalized_lines(light_path)
    assert any('"SESSION"' in line for line in light)
    assert light == normalized_lines(sdk_path)


def test_light_spans_nest_in_time_and_ids_are_valid(both: tuple[Any, ...]) -> None:
    _, _, light_path, _ = both
    lines = list(iter_span_lines(light_path))
    for d in lines:
        assert re.fullmatch(r"[0-9a-f]{32}", d["traceId"])
        assert re.fullmatch(r"[0-9a-f]{16}", d["spanId"])
        assert re.fullmatch(r"([0-9a-f]{16})?", d["parentSpanId"])
        assert int(d["traceId"], 16) != 0
        assert int(d["spanId"], 16) != 0
    assert len({d["spanId"] for d in lines}) == len(lines)
    spans = read_spans(light_path)
    by_id = {s.span_id: s for s in spans}
    for s in spans:
        assert 0 < s.start_ns <= s.end_ns
        for e in s.events:
            assert s.start_ns <= e.time_ns <= s.end_ns, (s.name, e.name)
        if s.parent_span_id is not None:
            p = by_id[s.parent_span_id]
            assert p.trace_id == s.trace_id
            assert p.start_ns <= s.start_ns <= s.end_ns <= p.end_ns, s.name


def test_the_light_file_reads_back_and_shows(tmp_path: Path) -> None:
    path = tmp_path / "spans.jsonl"
    (r,) = traced(path, react, sdk=False)
    spans = read_spans(path, trace_id=r.trace_id)
    assert len(spans) == 1 + 3 + 3 + 2
    (root,) = [s for s in spans if s.parent_span_id is None]
    assert root.name == "invoke_agent react smoke/t1"  # the bench task in the name
    assert root.attributes[c.HARNESS_RUN_FINISH_REASON] == "stop"
    assert root.attributes["harness.suite"] == "smoke"
    assert root.attributes[c.INPUT_VALUE] == "q"  # a file alone: content captured
    assert root.resource["service.name"] == "harness"
    assert root.resource["service.version"] == harness.__version__
    assert root.scope == c.SCOPE_NAME
    chat = [s for s in spans if s.name.startswith("chat")][-1]
    assert chat.kind_name == "client"
    assert chat.attributes[c.GEN_AI_RESPONSE_FINISH_REASONS] == ["stop"]
    out = CliRunner().invoke(main, ["traces", "show", str(path)], terminal_width=200)
    assert out.exit_code == 0, out.output
    assert f"trace {r.trace_id}" in out.output
    assert "9 spans" in out.output
    assert "50→7 tok" in out.output
    assert "execute_tool lookup" in out.output


async def test_concurrent_runs_never_mix(tmp_path: Path) -> None:
    path = tmp_path / "spans.jsonl"
    with configure_tracing(file=path) as tracing:
        assert tracing.light

        async def one(i: int) -> harness.Result:
            return await harness.arun(
                f"q{i}",
                provider="mock",
                tools=[slow],
                provider_opts=opts(
                    tool_turn(("slow", {"ms": 1 + i % 4}), ("slow", {"ms": 4 - i % 4})),
                    tool_turn(("slow", {"ms": 1 + i % 3})),
                    {"text": f"answer {i}"},
                ),
                tracer_provider=tracing.provider,
            )

        results = await asyncio.gather(*(one(i) for i in range(12)))
    spans = read_spans(path)
    assert len(spans) == 12 * (1 + 3 + 3 + 3)
    assert len({r.trace_id for r in results}) == 12
    by_id = {s.span_id: s for s in spans}
    for r in results:
        mine = [s for s in spans if s.trace_id == r.trace_id]
        assert len(mine) == 10
        (root,) = [s for s in mine if s.parent_span_id is None]
        assert root.attributes[c.GEN_AI_CONVERSATION_ID] == r.session_id
        for s in mine:  # every span chains up to its own run's root
            node = s
            while node.parent_span_id is not None:
                node = by_id[node.parent_span_id]
                assert node.trace_id == r.trace_id
            assert node is root
    # A run's spans are written together, at its end: its lines are contiguous.
    order = [d["traceId"] for d in iter_span_lines(path)]
    assert sum(1 for a, b in itertools.pairwise(order) if a != b) == 11
