"""Grading reads the answer: a plan or a critique is never the answer, and a run that did not
end in success fails text graders unless the task sets grade_on_error."""

from __future__ import annotations

from typing import Any

import pytest

import harness
from harness.grading import final_answer, grade, parse_grader
from harness.providers._mock import MockProvider

CONTAINS = parse_grader({"kind": "contains", "value": ["395"]})
LOOPING_CALL = {"tool_calls": [{"name": "calculator", "arguments": {"expression": "1"}}]}


def run(turns: list[dict[str, Any]], mode: str) -> harness.Result:
    provider = MockProvider(turns, when_exhausted="repeat_last")
    return harness.run("17*23+4?", provider=provider, mode=mode, tools=["calculator"])


def test_a_plan_stating_the_answer_does_not_pass_a_run_that_failed() -> None:
    result = run([{"text": "Goal: 17*23+4 = 395.", "for": "plan"}, LOOPING_CALL], "plan_and_solve")
    assert result.finish_reason == "error_no_progress"
    verdict = grade(CONTAINS, result)
    assert not verdict.passed
    assert "error_no_progress" in verdict.explanation
    assert "grade_on_error" in verdict.explanation
    # Even when the task opts in, the plan is not read as the answer.
    assert not grade(CONTAINS, result, grade_on_error=True).passed


def test_a_critique_stating_the_answer_does_not_pass_a_run_that_failed() -> None:
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "calculator", "arguments": {"expression": "17*23+4"}}]},
        {"text": "The step worked: the answer is 395.", "for": "reflect"},
        LOOPING_CALL,
    ]
    result = run(turns, "reflexion")
    assert not result.success
    assert any("395" in m.content for m in result.messages if m.role == "assistant")
    assert not grade(CONTAINS, result).passed
    assert not grade(CONTAINS, result, grade_on_error=True).passed


@pytest.mark.parametrize("mode", ["react", "plan_and_solve", "reflexion"])
def test_the_final_reply_of_a_stopped_run_is_graded(mode: str) -> None:
    turns: list[dict[str, Any]] = [
        {"text": "Plan: compute 17*23 and add 4, maybe 400.", "for": "plan"},
        {"tool_calls": [{"name": "calculator", "arguments": {"expression": "17*23+4"}}]},
        {"text": "Looks right, maybe 400.", "for": "reflect"},
        {"text": "395"},
    ]
    result = run(turns, mode)
    assert result.finish_reason == "stop"
    assert final_answer(result) == "395"
    assert grade(CONTAINS, result).passed
    assert not grade(parse_grader({"kind": "contains", "value": ["400"]}), result).passed


def test_grade_on_error_reads_the_last_main_reply() -> None:
    turns = [{"text": "So far it is 395.", **LOOPING_CALL}]
    result = run(turns, "react")
    assert result.finish_reason == "error_no_progress"
    assert not grade(CONTAINS, result).passed
    assert grade(CONTAINS, result, grade_on_error=True).passed


def test_non_text_graders_still_see_failed_runs() -> None:
    result = run([LOOPING_CALL], "react")
    assert grade(
        parse_grader({"kind": "finish_reason", "value": ["error_no_progress"]}), result
    ).passed


def test_an_empty_final_reply_is_the_answer_of_a_stopped_run() -> None:
    turns: list[dict[str, Any]] = [
        {
            "text": "Maybe 395?",
            "tool_calls": [{"name": "calculator", "arguments": {"expression": "2"}}],
        },
        {"text": ""},
    ]
    result = run(turns, "react")
    assert result.finish_reason == "stop"
    assert final_answer(result) == ""  # the earlier musing is not the answer
    assert not grade(CONTAINS, result).passed
