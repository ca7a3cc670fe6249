"""Real runs exported to a real Arize Phoenix over OTLP, read back through its REST API.

Each test traces mock-provider runs that use the calculator tool (a parallel pair of calls, then
one more, then the answer) to ``configure_tracing(otlp_endpoint=...)`` with an in-memory exporter
beside the OTLP one, shuts the handle down (flush), then polls
``GET /v1/projects/{project}/spans?trace_id=...`` until Phoenix holds every span, and checks what
Phoenix stored against what the SDK produced: names, parent links, OpenInference kinds (which
Phoenix reports as ``span_kind``), run outcome attributes and token attributes (chat spans only).
Each test sends to its own Phoenix project, chosen by the ``openinference.project.name``
resource attribute (``OTEL_RESOURCE_ATTRIBUTES``).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from datetime import datetime
from typing import Any

import httpx
import pytest
from phoenix_server import Phoenix

import harness
from harness.core import Result
from harness.telemetry import _conventions as c
from harness.telemetry import configure_tracing

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

#: How long Phoenix may take to make exported spans queryable (it inserts them in batches).
INGEST_TIMEOUT_S = 30.0
MODEL = "mock-model"
MODES = ("react", "reflexion")
PROMPT = "What is 17*23+4, and what is 2+2? Answer with the first number only."


def _calc(*exprs: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "calculator", "arguments": {"expression": e}} for e in exprs]}


#: Iteration 0: two calculator calls at once; iteration 1: one more; iteration 2: the answer.
TURNS = [_calc("17*23", "2+2"), _calc("391+4"), {"text": "395"}]


def _run_options(mode: str, provider: Any) -> dict[str, Any]:
    return {
        "provider": "mock",
        "mode": mode,
        "tools": ["calculator"],
        "provider_opts": {"turns": TURNS, "when_exhausted": "repeat_last"},
        "max_iterations": 8,
        "tracer_provider": provider,
    }


def _fetch_spans(
    server: Phoenix, project: str, trace_id: str, expected: int
) -> list[dict[str, Any]]:
    """The trace's spans as Phoenix's REST API returns them, once all ``expected`` are in."""
    url = f"{server.base_url}/v1/projects/{project}/spans"
    deadline = time.monotonic() + INGEST_TIMEOUT_S
    got: list[dict[str, Any]] = []
    status = None
    with httpx.Client(timeout=10.0) as client:
        while time.monotonic() < deadline:
            resp = client.get(url, params={"trace_id": trace_id, "limit": 1000})
            status = resp.status_code
            if status == 200:  # 404 until the project exists (first span ingested)
                got = resp.json()["data"]
                if len(got) >= expected:
                    return got
            time.sleep(0.2)
    pytest.fail(
        f"Phoenix has {len(got)} of {expected} spans of trace {trace_id} in project {project!r} "
        f"after {INGEST_TIMEOUT_S:.0f}s (last status {status})\n{server.log_tail()}"
    )


def _check_trace(spans: list[dict[str, Any]], sdk: list[Any], result: Result, mode: str) -> None:
    """Phoenix's copy of one run's trace against the SDK's spans and the run's Result."""

    # Phoenix stored exactly the spans the SDK produced, with the same tree.
    def hex_id(span_id: int) -> str:
        return format(span_id, "016x")

    sdk_tree = {
        (hex_id(s.context.span_id), hex_id(s.parent.span_id) if s.parent else None, s.name)
        for s in sdk
    }
    phx_tree = {(s["context"]["span_id"], s["parent_id"], s["name"]) for s in spans}
    assert phx_tree == sdk_tree
    assert {s["context"]["trace_id"] for s in spans} == {result.trace_id}

    by_id = {s["context"]["span_id"]: s for s in spans}

    def parent(s: dict[str, Any]) -> dict[str, Any]:
        return by_id[s["parent_id"]]

    def named(prefix: str) -> list[dict[str, Any]]:
        found = [s for s in spans if s["name"].startswith(prefix)]
        return sorted(found, key=lambda s: datetime.fromisoformat(s["start_time"]))

    # The root: invoke_agent {mode}, AGENT, with the run's outcome.
    roots = [s for s in spans if s["parent_id"] is None]
    assert len(roots) == 1
    root = roots[0]
    assert root["name"] == f"invoke_agent {mode}"
    assert root["span_kind"] == "AGENT"
    attrs = root["attributes"]
    assert attrs[c.GEN_AI_OPERATION_NAME] == c.OP_INVOKE_AGENT
    assert attrs[c.GEN_AI_AGENT_NAME] == mode
    assert attrs[c.HARNESS_RUN_FINISH_REASON] == result.finish_reason.value == "stop"
    assert attrs[c.HARNESS_RUN_CATEGORY] == "success"
    assert attrs[c.HARNESS_RUN_ITERATIONS] == result.iterations
    assert attrs[c.HARNESS_RUN_LLM_CALLS] == result.llm_calls
    assert attrs[c.HARNESS_RUN_TOOL_CALLS] == 3

    # Iterations: iteration 0..2 under the root, CHAIN.
    iterations = named("iteration ")
    assert [s["name"] for s in iterations] == ["iteration 0", "iteration 1", "iteration 2"]
    for s in iterations:
        assert s["parent_id"] == root["context"]["span_id"]
        assert s["span_kind"] == "CHAIN"
        assert s["attributes"][c.HARNESS_ITERATION] == int(s["name"].split()[1])

    # Provider calls: chat mock-model under an iteration, LLM, and the only spans with tokens.
    chats = named("chat")
    assert len(chats) == result.llm_calls
    assert {s["name"] for s in chats} == {f"chat {MODEL}"}
    for s in chats:
        assert parent(s)["name"].startswith("iteration ")
        assert s["span_kind"] == "LLM"
        a = s["attributes"]
        assert a[c.GEN_AI_OPERATION_NAME] == c.OP_CHAT
        assert a[c.GEN_AI_REQUEST_MODEL] == MODEL
        assert a[c.GEN_AI_PROVIDER_NAME] == "mock"
        assert isinstance(a[c.GEN_AI_USAGE_INPUT_TOKENS], int)
        assert isinstance(a[c.GEN_AI_USAGE_OUTPUT_TOKENS], int)
    # Summing the chat spans gives the run's usage: nothing counted twice, nothing missing.
    assert sum(s["attributes"][c.GEN_AI_USAGE_INPUT_TOKENS] for s in chats) == (
        result.usage.input_tokens
    )
    assert sum(s["attributes"][c.GEN_AI_USAGE_OUTPUT_TOKENS] for s in chats) == (
        result.usage.output_tokens
    )
    for s in spans:
        if s["span_kind"] != "LLM":
            assert not [k for k in s["attributes"] if k.startswith("gen_ai.usage.")], s["name"]
    purposes = Counter(s["attributes"][c.HARNESS_CALL_PURPOSE] for s in chats)
    if mode == "reflexion":  # a critique after each tool-using turn
        assert purposes == {"main": 3, "reflect": 2}
    else:
        assert purposes == {"main": 3}

    # Tool calls: execute_tool calculator under its iteration, TOOL; the parallel pair siblings.
    tools = named("execute_tool ")
    assert [s["name"] for s in tools] == ["execute_tool calculator"] * 3
    for s in tools:
        assert s["span_kind"] == "TOOL"
        assert parent(s)["name"].startswith("iteration ")
        assert s["attributes"][c.GEN_AI_TOOL_NAME] == "calculator"
        assert s["attributes"][c.GEN_AI_TOOL_TYPE] == c.TOOL_TYPE_FUNCTION
        assert s["attributes"][c.GEN_AI_TOOL_CALL_ID]
    assert Counter(parent(s)["name"] for s in tools) == {"iteration 0": 2, "iteration 1": 1}

    assert all(s["status_code"] != "ERROR" for s in spans)
    # Content capture is off by default for OTLP: no message text left the process.
    for s in spans:
        assert c.INPUT_VALUE not in s["attributes"], s["name"]
        for e in s["events"]:
            assert c.HARNESS_CONTENT_TEXT not in e["attributes"]


def test_multi_mode_runs_over_otlp_http(phoenix: Phoenix, monkeypatch: pytest.MonkeyPatch) -> None:
    project = "harness-it-http"
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", f"openinference.project.name={project}")
    tracing = configure_tracing(
        otlp_endpoint=phoenix.base_url, otlp_protocol="http/protobuf", in_memory=True
    )
    assert tracing.otlp_endpoint == phoenix.otlp_http_endpoint
    assert tracing.capture_content is False

    async def both() -> list[Result]:  # concurrently: the two traces must not mix
        runs = [harness.arun(PROMPT, **_run_options(m, tracing.provider)) for m in MODES]
        return list(await asyncio.gather(*runs))

    try:
        results = asyncio.run(both())
    finally:
        tracing.shutdown(timeout_s=10.0)
    assert tracing.export_failures == 0

    sdk_spans = tracing.finished_spans()
    for mode, result in zip(MODES, results, strict=True):
        assert result.finish_reason.value == "stop", (mode, result.halted_reason)
        assert (result.text or "").strip() == "395"
        assert result.trace_id
        sdk = [s for s in sdk_spans if format(s.context.trace_id, "032x") == result.trace_id]
        spans = _fetch_spans(phoenix, project, result.trace_id, expected=len(sdk))
        _check_trace(spans, sdk, result, mode)

    # The project was created from the resource attribute and holds both traces.
    with httpx.Client(timeout=10.0) as client:
        names = [p["name"] for p in client.get(f"{phoenix.base_url}/v1/projects").json()["data"]]
        assert project in names
        traces = client.get(f"{phoenix.base_url}/v1/projects/{project}/traces").json()["data"]
    assert {t["trace_id"] for t in traces} >= {r.trace_id for r in results}


def test_run_over_otlp_grpc(phoenix: Phoenix, monkeypatch: pytest.MonkeyPatch) -> None:
    project = "harness-it-grpc"
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", f"openinference.project.name={project}")
    tracing = configure_tracing(
        otlp_endpoint=phoenix.grpc_endpoint, otlp_protocol="grpc", in_memory=True
    )
    try:
        result = harness.run(PROMPT, **_run_options("react", tracing.provider))
    finally:
        tracing.shutdown(timeout_s=10.0)
    assert tracing.export_failures == 0
    assert result.trace_id
    sdk = list(tracing.finished_spans())
    spans = _fetch_spans(phoenix, project, result.trace_id, expected=len(sdk))
    _check_trace(spans, sdk, result, "react")
