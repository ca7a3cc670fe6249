"""Scripted reviewer decisions in suites (`approvals:`), applied by the bench as the runner does."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest

import harness
from harness.bench._runner import apply_approvals
from harness.grading import agrade
from harness.store._transcript import decode_transcript
from harness.suites._approvals import Review
from harness.suites._load import load_suites
from harness.suites._suite import Suite, SuiteError

SUITES = Path(__file__).resolve().parents[2] / "suites"


@pytest.fixture(scope="module")
def review() -> Suite:
    return load_suites([SUITES / "review.yaml"])[0]


async def _cell(
    suite: Suite,
    task_id: str,
    reviews: list[Review] | None = None,
    mock: dict[str, Any] | None = None,
) -> tuple[harness.Result, bool]:
    task = next(t for t in suite.tasks if t.id == task_id)
    opts = mock or task.mock_provider_opts()
    assert opts is not None  # each task of review.yaml has a mock script
    with tempfile.TemporaryDirectory() as tmp:
        result = await harness.arun(
            task.prompt, provider="mock", cwd=tmp,
            provider_opts=opts, **task.run_options(),
        )  # fmt: skip
        assert result.finish_reason is harness.FinishReason.INTERRUPTED
        result = await apply_approvals(task, result, reviews)
        return result, (await agrade(task.expect, result, Path(tmp))).passed


async def test_an_edit_decision_runs_but_the_models_proposal_is_graded(review: Suite) -> None:
    reviews: list[Review] = []
    result, passed = await _cell(review, "edit-fixes-value", reviews)
    assert passed  # the mock proposes the right value; the reviewer rewrites its form
    edited = next(m for m in result.messages if m.content.startswith("[arguments edited"))
    assert '"new": "port = 8443"' in edited.content
    (decision,) = reviews
    assert decision.name == "edit_file"
    assert decision.proposed == {"path": "server.ini", "old": "8080", "new": "8443"}
    # A model that proposes the wrong port fails, although the reviewer's edit fixes the file.
    wrong = {"turns": [
        {"tool_calls": [{"name": "edit_file",
                         "arguments": {"path": "server.ini", "old": "8080", "new": "8433"}}]},
        {"text": "The port is now set."},
    ]}  # fmt: skip
    result, passed = await _cell(review, "edit-fixes-value", mock=wrong)
    assert not passed


async def test_the_stored_transcript_keeps_the_proposal_and_the_decision_apart(
    review: Suite,
) -> None:
    from harness.bench._matrix import Cell
    from harness.bench._outcome import CellOutcome
    from harness.bench._session import _row
    from harness.grading._grade import Grade

    task = next(t for t in review.tasks if t.id == "edit-fixes-value")
    wrong = {"path": "server.ini", "old": "8080", "new": "8433"}
    mock = {"turns": [
        {"tool_calls": [{"name": "edit_file", "arguments": wrong}]}, {"text": "Set."},
    ]}  # fmt: skip
    reviews: list[Review] = []
    result, _ = await _cell(review, "edit-fixes-value", reviews, mock=mock)
    cell = Cell(review, task, "react", "mock", 0)
    outcome = CellOutcome(cell, None, result, Grade.of(False, "x"), reviews=reviews)
    row = _row(outcome, "run-1")
    doc = decode_transcript(row["transcript"])
    assert doc is not None
    messages = doc["messages"]
    call = next(m for m in messages if m["role"] == "assistant" and m["tool_calls"])
    assert call["tool_calls"][0]["arguments"] == wrong  # the model's own call
    at = messages.index(call)
    entry = messages[at + 1]
    assert entry["role"] == "review"
    assert entry["review"]["decision"] == "edited"
    assert entry["review"]["proposed"] == wrong
    assert entry["review"]["arguments"]["new"] == "port = 8443"  # what ran instead
    assert row["drift"] == 0


def test_the_transcript_keeps_the_malformed_reply_of_a_schema_failure() -> None:
    from harness.store._rows import result_row

    result = harness.Result(
        finish_reason=harness.FinishReason.ERROR_SCHEMA_VALIDATION,
        category=harness.Category.RETRYABLE,
        messages=[harness.Message.user("Call the tool.")],
        error_diagnostic={"received": '<tool_call>{"name": broken', "violations": []},
        mode="react",
        provider="x",
    )
    row = result_row(result, run_id="r", suite="s", task_id="t", passed=False)
    doc = decode_transcript(row["transcript"])
    assert doc is not None
    last = doc["messages"][-1]
    assert (last["role"], last["turn"]) == ("assistant", "malformed")
    assert last["content"] == '<tool_call>{"name": broken'


async def test_a_pause_with_no_decision_left_ends_the_cell_interrupted(review: Suite) -> None:
    result, passed = await _cell(review, "retry-after-deny")
    assert not passed
    assert result.finish_reason is harness.FinishReason.INTERRUPTED
    assert result.category is harness.Category.PAUSED
    assert result.resume_state is None  # released by the bench
    assert [c.name for c in result.pending_tool_calls or []] == ["write_file"]


def test_approvals_must_be_decisions(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "suite: bad\ntasks:\n  - id: t\n    prompt: p\n    expect: {kind: contains, value: x}\n"
        "    approvals: [{allow: {}}]\n",
        encoding="utf-8",
    )
    with pytest.raises(SuiteError, match="approvals"):
        load_suites([bad])
