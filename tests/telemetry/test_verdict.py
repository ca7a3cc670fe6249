"""Grades in the traces: with ``configure_tracing(hold_roots=True)`` a run's root span is held
when it ends, and exported once, either with the verdict that ``record_verdict`` adds (the
``gen_ai.evaluation.result`` event and the flat ``harness.cell.*`` attributes) or unchanged at
shutdown. Both tracers: the light one (a span file alone) and the SDK's (``sdk=True``)."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest

import harness
from harness.core import Result
from harness.telemetry import TracingHandle, configure_tracing, read_spans, record_verdict
from harness.telemetry import _conventions as c
from harness.telemetry._readspans import SpanRecord
from harness.telemetry._verdict import HeldRoots, verdict_fields

TRACERS = ["light", "sdk"]
BENCH = {"harness.suite": "arith", "harness.task": "add", "harness.bench.run_id": "R1"}
FAILED = {
    "status": "failed",
    "passed": False,
    "score": 0.0,
    "grader": "exact_match",
    "explanation": "expected '4', got '5'",
}


def _tracing(tmp_path: Path, tracer: str, **kwargs: Any) -> TracingHandle:
    handle = configure_tracing(
        file=tmp_path / "spans.jsonl", hold_roots=True, sdk=tracer == "sdk", **kwargs
    )
    assert handle.light is (tracer == "light")
    return handle


def _run(handle: TracingHandle, answer: str = "4", **attrs: Any) -> Result:
    result = harness.run(
        "What is 2+2?",
        provider="mock",
        provider_opts={"turns": [{"text": answer}]},
        tracer_provider=handle.provider,
        trace_attributes={**BENCH, **attrs},
    )
    assert result.trace_id
    return result


def _spans(handle: TracingHandle, trace_id: str) -> list[SpanRecord]:
    assert handle.file is not None
    if not handle.file.exists():
        return []
    return read_spans(handle.file, trace_id=trace_id)


def _roots(handle: TracingHandle, trace_id: str) -> list[SpanRecord]:
    return [s for s in _spans(handle, trace_id) if s.parent_span_id is None]


def _verdict_of(root: SpanRecord) -> dict[str, Any]:
    """The verdict fields on a root read back from the file."""
    events = [e for e in root.events if e.name == c.EVENT_EVALUATION_RESULT]
    flat = {
        k: v
        for k, v in root.attributes.items()
        if k.startswith(("harness.cell.", "harness.grader."))
    }
    return {"flat": flat, "events": [e.attributes for e in events]}


@pytest.mark.parametrize("tracer", TRACERS)
def test_root_is_held_until_its_verdict_and_exported_once_with_it(
    tmp_path: Path, tracer: str
) -> None:
    handle = _tracing(tmp_path, tracer)
    try:
        result = _run(handle, answer="5")
        assert result.trace_id  # (_run checked it: this narrows the Optional for mypy)
        assert handle.force_flush()
        # The run's other spans are out; its root waits for the grade (a flush leaves it).
        names = [s.name for s in _spans(handle, result.trace_id)]
        assert names
        assert not any(n.startswith("invoke_agent") for n in names), names

        assert record_verdict(handle.provider, result.trace_id, FAILED) is True
        assert handle.force_flush()
        (root,) = _roots(handle, result.trace_id)
        assert root.name == "invoke_agent react arith/add"
        assert root.attributes[c.HARNESS_BENCH_RUN_ID] == "R1"
        assert root.attributes[c.HARNESS_RUN_FINISH_REASON] == "stop"  # the run's own attributes
        assert _verdict_of(root) == {
            "flat": {
                c.HARNESS_CELL_STATUS: "failed",
                c.HARNESS_CELL_PASSED: False,
                c.HARNESS_CELL_SCORE: 0.0,
                c.HARNESS_GRADER_KIND: "exact_match",
            },
            "events": [
                {
                    c.GEN_AI_EVALUATION_NAME: "harness.verdict",
                    c.GEN_AI_EVALUATION_SCORE_LABEL: "failed",
                    c.GEN_AI_EVALUATION_SCORE_VALUE: 0.0,
                    c.GEN_AI_EVALUATION_EXPLANATION: "expected '4', got '5'",
                }
            ],
        }
        # The event is the root's last, stamped after the root ended (when the grade came).
        assert root.events[-1].name == c.EVENT_EVALUATION_RESULT
        assert root.events[-1].time_ns >= root.end_ns
        # Released once: a second verdict finds nothing held.
        assert record_verdict(handle.provider, result.trace_id, FAILED) is False
    finally:
        handle.shutdown()
    assert len(_roots(handle, result.trace_id)) == 1


@pytest.mark.parametrize("tracer", TRACERS)
def test_a_root_without_verdict_is_exported_unchanged_at_shutdown(
    tmp_path: Path, tracer: str
) -> None:
    handle = _tracing(tmp_path, tracer)
    try:
        graded, ungraded = _run(handle), _run(handle)
        assert graded.trace_id  # (_run checked it: this narrows the Optional for mypy)
        assert ungraded.trace_id
        assert record_verdict(handle, graded.trace_id, {**FAILED, "status": "passed"})
        assert handle.force_flush()
        assert _roots(handle, ungraded.trace_id) == []
    finally:
        handle.shutdown()
    (root,) = _roots(handle, ungraded.trace_id)
    assert _verdict_of(root) == {"flat": {}, "events": []}
    assert root.attributes[c.HARNESS_RUN_FINISH_REASON] == "stop"
    (root,) = _roots(handle, graded.trace_id)
    assert root.attributes[c.HARNESS_CELL_STATUS] == "passed"
    # After the shutdown nothing is held any more, and nothing is written twice.
    assert record_verdict(handle.provider, ungraded.trace_id, FAILED) is False
    assert len(_roots(handle, ungraded.trace_id)) == 1


@pytest.mark.parametrize("tracer", TRACERS)
def test_a_run_that_crashes_before_grading_keeps_its_root(tmp_path: Path, tracer: str) -> None:
    """A run that fails (the mock's script runs out: error_during_execution, ERROR status on the
    root) and whose grading never happens: the root comes out at shutdown, status and all."""
    handle = _tracing(tmp_path, tracer)
    try:
        result = harness.run(
            "What is 2+2?",
            provider="mock",
            provider_opts={"turns": []},
            tracer_provider=handle.provider,
            trace_attributes=BENCH,
        )
        assert result.finish_reason.value == "error_during_execution"
        assert result.trace_id

        def grade() -> None:
            raise RuntimeError("grader crashed")

        with pytest.raises(RuntimeError):
            grade()
    finally:
        handle.shutdown()
    (root,) = _roots(handle, result.trace_id)
    assert root.is_error
    assert root.attributes[c.HARNESS_RUN_FINISH_REASON] == "error_during_execution"
    assert _verdict_of(root) == {"flat": {}, "events": []}
    assert len(_spans(handle, result.trace_id)) >= 2  # the rest of the run is there too


@pytest.mark.parametrize("tracer", TRACERS)
def test_an_error_verdict_says_the_evaluation_failed(tmp_path: Path, tracer: str) -> None:
    handle = _tracing(tmp_path, tracer)
    try:
        result = _run(handle)
        assert result.trace_id  # (_run checked it: this narrows the Optional for mypy)
        verdict = {"status": "error", "passed": False, "explanation": "grader: timed out"}
        assert record_verdict(handle.provider, result.trace_id, verdict)
    finally:
        handle.shutdown()
    (root,) = _roots(handle, result.trace_id)
    got = _verdict_of(root)
    assert got["flat"] == {c.HARNESS_CELL_STATUS: "error", c.HARNESS_CELL_PASSED: False}
    assert got["events"] == [
        {
            c.GEN_AI_EVALUATION_NAME: "harness.verdict",
            c.GEN_AI_EVALUATION_SCORE_LABEL: "error",
            c.GEN_AI_EVALUATION_EXPLANATION: "grader: timed out",
            c.ERROR_TYPE: "cell_error",
        }
    ]


@pytest.mark.parametrize("tracer", TRACERS)
def test_concurrent_runs_each_get_their_own_verdict(tmp_path: Path, tracer: str) -> None:
    handle = _tracing(tmp_path, tracer)

    async def runs() -> list[Result]:
        return list(
            await asyncio.gather(
                *(
                    harness.arun(
                        "What is 2+2?",
                        provider="mock",
                        provider_opts={"turns": [{"text": str(i)}]},
                        tracer_provider=handle.provider,
                        trace_attributes={**BENCH, "harness.epoch": i},
                    )
                    for i in range(8)
                )
            )
        )

    try:
        results = asyncio.run(runs())
        order = list(range(8))
        random.Random(7).shuffle(order)
        for i in order:
            score = i / 10
            verdict = {"passed": i % 2 == 0, "score": score, "grader": "python"}
            assert record_verdict(handle.provider, results[i].trace_id or "", verdict)
    finally:
        handle.shutdown()
    for i, result in enumerate(results):
        (root,) = _roots(handle, result.trace_id or "")
        assert root.attributes["harness.epoch"] == i
        assert root.attributes[c.HARNESS_CELL_SCORE] == i / 10
        assert root.attributes[c.HARNESS_CELL_STATUS] == ("passed" if i % 2 == 0 else "failed")


def test_both_tracers_write_the_same_verdict(tmp_path: Path) -> None:
    roots = []
    for tracer in TRACERS:
        handle = configure_tracing(
            file=tmp_path / f"{tracer}.jsonl", hold_roots=True, sdk=tracer == "sdk"
        )
        try:
            result = _run(handle)
            assert record_verdict(handle.provider, result.trace_id or "", FAILED)
        finally:
            handle.shutdown()
        (root,) = _roots(handle, result.trace_id or "")
        roots.append(root)
    light, sdk = roots

    def masked(r: SpanRecord) -> tuple[Any, ...]:
        attrs = {k: v for k, v in r.attributes.items() if k != c.GEN_AI_CONVERSATION_ID}
        return (r.name, r.kind, attrs, [(e.name, e.attributes) for e in r.events], r.status_code)

    assert masked(light) == masked(sdk)


def test_in_memory_exporter_sees_the_amended_root(tmp_path: Path) -> None:
    handle = configure_tracing(in_memory=True, hold_roots=True)
    try:
        result = _run(handle)
        assert not [s for s in handle.finished_spans() if s.parent is None]
        assert record_verdict(handle.provider, result.trace_id or "", FAILED)
        (root,) = [s for s in handle.finished_spans() if s.parent is None]
        assert root.attributes is not None
        assert root.attributes[c.HARNESS_CELL_STATUS] == "failed"
        assert [e.name for e in root.events][-1] == c.EVENT_EVALUATION_RESULT
        assert root.dropped_attributes == 0
    finally:
        handle.shutdown()
    assert len([s for s in handle.finished_spans() if s.parent is None]) == 1


@pytest.mark.parametrize("tracer", TRACERS)
def test_without_hold_roots_nothing_waits(tmp_path: Path, tracer: str) -> None:
    handle = configure_tracing(file=tmp_path / "spans.jsonl", sdk=tracer == "sdk")
    try:
        result = _run(handle)
        assert handle.force_flush()
        (root,) = _roots(handle, result.trace_id or "")
        assert record_verdict(handle.provider, result.trace_id or "", FAILED) is False
    finally:
        handle.shutdown()
    assert c.HARNESS_CELL_STATUS not in root.attributes
    assert len(_roots(handle, result.trace_id or "")) == 1


@pytest.mark.parametrize("tracer", TRACERS)
def test_bad_arguments_release_nothing(tmp_path: Path, tracer: str) -> None:
    handle = _tracing(tmp_path, tracer)
    try:
        result = _run(handle)
        tid = result.trace_id or ""
        assert record_verdict(object(), tid, FAILED) is False  # not a provider of ours
        assert record_verdict(handle.provider, "not hex", FAILED) is False
        assert record_verdict(handle.provider, "0" * 32, FAILED) is False  # no such root
        with pytest.raises(ValueError, match="status"):
            record_verdict(handle.provider, tid, {"status": "maybe"})
        assert handle.force_flush()
        assert _roots(handle, tid) == []  # still held
    finally:
        handle.shutdown()
    (root,) = _roots(handle, tid)
    assert c.HARNESS_CELL_STATUS not in root.attributes


def test_verdict_fields_derive_the_status_from_passed() -> None:
    attrs, event = verdict_fields({"passed": True, "score": 1, "name": "correctness"})
    assert attrs == {c.HARNESS_CELL_STATUS: "passed", c.HARNESS_CELL_PASSED: True,
                     c.HARNESS_CELL_SCORE: 1.0}  # fmt: skip
    assert event == {
        c.GEN_AI_EVALUATION_NAME: "correctness",
        c.GEN_AI_EVALUATION_SCORE_LABEL: "passed",
        c.GEN_AI_EVALUATION_SCORE_VALUE: 1.0,
    }
    with pytest.raises(ValueError, match="status or passed"):
        verdict_fields({"score": 0.5})


def test_held_roots_release_the_oldest_beyond_the_limit() -> None:
    out: list[str] = []
    held: HeldRoots[str] = HeldRoots(out.append, limit=2)
    assert held.hold(1, "a")
    assert held.hold(2, "b")
    assert not held.hold(2, "b again")  # one root per trace
    assert held.hold(3, "c")
    assert out == ["a"]
    assert len(held) == 2
    assert held.take(1) is None
    assert held.take(2) == "b"
    assert held.take_all() == ["c"]
    assert not held.hold(4, "d")  # closed: the caller exports it at once
