"""A judge's verdict with ``passed`` quoted or not a boolean (issue 34, adversary round 16,
part A). The verdict's ``passed`` was taken with ``bool()``: ``{"passed": "false"}`` (small
models quote JSON booleans) was stored **passed** with a score of 1.0, ``{"passed": "false",
"score": 0.9}`` passed, ``"passed": []`` failed; ``"score": true`` counted as 1.0. A reply
whose text first nests arrays past the JSON parser ended as the grader's ``RecursionError``
though a verdict followed. Now ``"true"`` / ``"false"`` are read as the booleans they spell,
anything else that is not a boolean gives no verdict (an error cell), and a candidate the parser
cannot nest is skipped. Through a real loopback judge (Anthropic's wire format) too."""

from __future__ import annotations

from pathlib import Path

import pytest
from judged_run import judged_cell

from harness.grading import grade
from tests.grading.test_judge_grader import answered, mock_judge


@pytest.mark.parametrize(
    ("reply", "passed", "score"),
    [
        ('{"passed": "false", "explanation": "x"}', False, 0.0),  # passed, 1.0 before
        ('{"passed": "false", "score": 0.9, "explanation": "x"}', False, 0.9),  # passed before
        ('{"passed": " TRUE ", "explanation": "x"}', True, 1.0),
        ('{"passed": null, "score": 0.9, "explanation": "x"}', True, 0.9),
        ("[" * 50_000 + "]" * 50_000 + ' {"passed": true, "explanation": "x"}', True, 1.0),
    ],
    ids=["false", "false-with-score", "true-spaced", "null", "deep-before"],
)
def test_a_quoted_passed_is_read_as_the_boolean_it_spells(
    reply: str, passed: bool, score: float
) -> None:
    verdict = grade(mock_judge(reply), answered())
    assert not verdict.error, verdict.explanation
    assert (verdict.passed, verdict.score) == (passed, score)


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ('{"passed": [], "score": 0.9}', "passed is [], not true or false"),
        ('{"passed": "yes", "score": 0.9}', "passed is 'yes', not true or false"),
        ('{"passed": true, "score": true}', "score True is not a number"),
    ],
    ids=["list", "yes", "bool-score"],
)
def test_a_passed_or_score_of_another_kind_gives_no_verdict(reply: str, why: str) -> None:
    verdict = grade(mock_judge(reply), answered())
    assert verdict.error
    assert f"gave no verdict ({why})" in verdict.explanation


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_loopback_judge_quoting_false_fails_the_cell(tmp_path: Path) -> None:
    message = {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m",
        "content": [{"type": "text", "text": '{"passed": "false", "explanation": "no hi"}'}],
        "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 5},
    }  # fmt: skip
    row = judged_cell(tmp_path, message, "anthropic:m", key="ANTHROPIC_API_KEY")
    assert row == ("failed", 0.0)  # ('passed', 1.0) before
