"""Scripted reviewer decisions in suites (`approvals:`), applied by the bench as the runner does."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

import harness
from harness.bench._runner import apply_approvals
from harness.grading import grade
from harness.suites._load import load_suites
from harness.suites._suite import Suite, SuiteError

SUITES = Path(__file__).resolve().parents[2] / "suites"


@pytest.fixture(scope="module")
def review() -> Suite:
    return load_suites([SUITES / "review.yaml"])[0]


async def _cell(suite: Suite, task_id: str) -> tuple[harness.Result, bool]:
    task = next(t for t in suite.tasks if t.id == task_id)
    with tempfile.TemporaryDirectory() as tmp:
        result = await harness.arun(
            task.prompt, provider="mock", cwd=tmp, provider_opts=task.mock_provider_opts(),
            **task.run_options(),
        )  # fmt: skip
        assert result.finish_reason is harness.FinishReason.INTERRUPTED
        result = await apply_approvals(task, result)
        return result, grade(task.expect, result, Path(tmp)).passed


async def test_an_edit_decision_is_what_makes_the_task_pass(review: Suite) -> None:
    result, passed = await _cell(review, "edit-fixes-value")
    assert passed
    edited = next(m for m in result.messages if m.content.startswith("[arguments edited"))
    assert '"new": "port = 8443"' in edited.content


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
