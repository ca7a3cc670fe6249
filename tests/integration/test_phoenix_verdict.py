"""Grades in the traces, read back from a real Arize Phoenix: a failed cell is found by its
verdict.

Two graded runs, traced as the bench traces its cells (the bench's ``trace_attributes``, a
``configure_tracing(hold_roots=True)`` provider exporting over OTLP/HTTP), get their verdicts
through ``record_verdict`` after they ended, as the bench runner records them after grading. Then
Phoenix must find the failed one by its verdict: by the REST API's attribute filter
(``GET /v1/projects/{project}/spans?attribute=harness.cell.status:failed``), and by the span filter
its UI uses (GraphQL ``spans(filterCondition: "...")``), with the ``gen_ai.evaluation.result``
event on the span.
"""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from phoenix_server import Phoenix

import harness
from harness.core import Result
from harness.telemetry import _conventions as c
from harness.telemetry import configure_tracing, record_verdict

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

#: How long Phoenix may take to make exported spans queryable (it inserts them in batches).
INGEST_TIMEOUT_S = 30.0
PROJECT = "harness-it-verdict"
RUN_ID = "20260101-000000-it0001"


def _cell(provider: Any, task: str, answer: str) -> Result:
    """A bench-like cell: the mock answers ``answer`` to "What is 2+2?"."""
    result = harness.run(
        "What is 2+2?",
        provider="mock",
        provider_opts={"turns": [{"text": answer}]},
        tracer_provider=provider,
        trace_attributes={
            "harness.suite": "arithmetic",
            "harness.task": task,
            "harness.mode": "react",
            "harness.provider": "mock",
            "harness.epoch": 0,
            "harness.bench.run_id": RUN_ID,
        },
    )
    assert result.trace_id
    return result


def _grade(result: Result) -> dict[str, Any]:
    """An exact-match grade of the answer, as the bench's grader would give it."""
    passed = (result.text or "").strip() == "4"
    return {
        "status": "passed" if passed else "failed",
        "passed": passed,
        "score": 1.0 if passed else 0.0,
        "grader": "exact_match",
        "explanation": "matched '4'" if passed else f"expected '4', got {result.text!r}",
    }


def _poll(server: Phoenix, fetch: Any, expected: int, what: str) -> list[dict[str, Any]]:
    deadline = time.monotonic() + INGEST_TIMEOUT_S
    got: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        got = fetch()
        if len(got) >= expected:
            return got
        time.sleep(0.2)
    pytest.fail(f"Phoenix found {len(got)} of {expected} {what}\n{server.log_tail()}")


def test_a_failed_cell_is_found_by_its_verdict(
    phoenix: Phoenix, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", f"openinference.project.name={PROJECT}")
    tracing = configure_tracing(
        otlp_endpoint=phoenix.base_url, otlp_protocol="http/protobuf", hold_roots=True
    )
    try:
        passed = _cell(tracing.provider, "add-2", "4")
        failed = _cell(tracing.provider, "add-3", "5")
        ungraded = _cell(tracing.provider, "add-4", "4")  # its grading "crashed": no verdict
        # Grading happens after the runs ended; each verdict goes on its run's held root.
        for result in (passed, failed):
            assert record_verdict(tracing.provider, result.trace_id or "", _grade(result))
    finally:
        tracing.shutdown(timeout_s=10.0)
    assert tracing.export_failures == 0

    base = f"{phoenix.base_url}/v1/projects/{PROJECT}"
    with httpx.Client(timeout=10.0) as client:

        def spans(**params: Any) -> list[dict[str, Any]]:
            resp = client.get(f"{base}/spans", params={"limit": 1000, **params})
            if resp.status_code == 404:  # the project exists once its first span is in
                return []
            resp.raise_for_status()
            data: list[dict[str, Any]] = resp.json()["data"]
            return data

        # Every root made it, the ungraded one too (released unchanged at shutdown).
        roots = _poll(phoenix, lambda: spans(parent_id="null"), 3, "root spans")
        assert {r["context"]["trace_id"] for r in roots} == {
            r.trace_id for r in (passed, failed, ungraded)
        }
        assert len(roots) == 3  # each exported once

        # The REST API's attribute filter finds the failed cell, and only it.
        found = spans(attribute=f"{c.HARNESS_CELL_STATUS}:failed")
        assert [s["context"]["trace_id"] for s in found] == [failed.trace_id]
        (root,) = found
        assert root["name"] == "invoke_agent react arithmetic/add-3"
        assert root["parent_id"] is None
        attrs = root["attributes"]
        assert attrs[c.HARNESS_CELL_PASSED] is False
        assert attrs[c.HARNESS_CELL_SCORE] == 0.0
        assert attrs[c.HARNESS_GRADER_KIND] == "exact_match"
        assert attrs[c.HARNESS_BENCH_RUN_ID] == RUN_ID
        assert attrs[c.HARNESS_RUN_FINISH_REASON] == "stop"  # the run's own outcome kept
        (event,) = [e for e in root["events"] if e["name"] == c.EVENT_EVALUATION_RESULT]
        assert event["attributes"] == {
            c.GEN_AI_EVALUATION_NAME: c.EVALUATION_NAME,
            c.GEN_AI_EVALUATION_SCORE_LABEL: "failed",
            c.GEN_AI_EVALUATION_SCORE_VALUE: 0.0,
            c.GEN_AI_EVALUATION_EXPLANATION: "expected '4', got '5'",
        }
        assert [s["context"]["trace_id"] for s in spans(attribute="harness.cell.passed:true")] == [
            passed.trace_id
        ]

        # The span filter of Phoenix's UI (its GraphQL API) finds it too.
        projects = client.get(f"{phoenix.base_url}/v1/projects").json()["data"]
        project_id = next(p["id"] for p in projects if p["name"] == PROJECT)
        query = """
            query ($id: ID!, $cond: String) {
              node(id: $id) { ... on Project {
                spans(first: 100, filterCondition: $cond) {
                  edges { node { name spanId trace { traceId } } }
                }
              } }
            }"""
        for condition in (
            "harness.cell.status == 'failed'",
            "harness.cell.passed == False and harness.grader.kind == 'exact_match'",
            "harness.cell.score < 0.5",
        ):
            resp = client.post(
                f"{phoenix.base_url}/graphql",
                json={"query": query, "variables": {"id": project_id, "cond": condition}},
            )
            resp.raise_for_status()
            body = resp.json()
            assert "errors" not in body, (condition, body)
            edges = body["data"]["node"]["spans"]["edges"]
            assert [e["node"]["trace"]["traceId"] for e in edges] == [failed.trace_id], condition
