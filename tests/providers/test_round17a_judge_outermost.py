"""A judge's failing verdict holding objects of its own (issue 34, adversary round 17, part
A). The verdict search took the whole reply, fenced objects, then objects holding no other
(``\\{[^{}]*\\}``): ``Verdict: {"passed": false, "score": 0.1, "criteria": {"accuracy":
{"passed": true}}}`` (per-criterion verdicts, a word before or after) was read from its inner
``{"passed": true}`` and stored **passed**, 1.0. Now the outermost objects are tried first.
Through a real loopback judge (OpenAI's wire format) too."""

from __future__ import annotations

from pathlib import Path

import pytest
from judged_run import judged_cell

from harness.grading import grade
from tests.grading.test_judge_grader import answered, mock_judge

NESTED = (
    'Verdict: {"passed": false, "score": 0.1, "criteria": {"accuracy": {"passed": true, '
    '"score": 1.0}}, "explanation": "wrong"} thanks'
)


@pytest.mark.parametrize(
    ("reply", "passed", "score"),
    [
        (NESTED, False, 0.1),  # True, 1.0 before
        ('{"passed": false, "criteria": [{"name": "tone", "passed": true}]}\nDone.', False, 0.0),
        ('{"passed": false, "detail": {"score": 0.95}} done', False, 0.0),  # True, 0.95 before
        ('So: {"verdict": {"passed": true}} ok', True, 1.0),  # an inner one still counts
        (
            '{"passed": false, "explanation": "the answer {\\"passed\\": true} is wrong"} ok',
            False,
            0.0,
        ),
    ],
    ids=["criteria", "list", "inner-score", "only-inner", "escaped"],
)
def test_the_outermost_verdict_is_read_first(reply: str, passed: bool, score: float) -> None:
    verdict = grade(mock_judge(reply), answered())
    assert not verdict.error, verdict.explanation
    assert (verdict.passed, verdict.score) == (passed, score)


def test_a_reply_of_braces_is_read_quickly() -> None:
    verdict = grade(mock_judge("{" * 300_000 + '{"a": "' * 50_000), answered())
    assert verdict.error
    assert "gave no verdict (no JSON object with passed or score)" in verdict.explanation


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_loopback_judge_with_per_criterion_verdicts_fails_the_cell(tmp_path: Path) -> None:
    body = {
        "id": "x", "model": "m", "usage": {"prompt_tokens": 3, "completion_tokens": 3},
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": NESTED}}],
    }  # fmt: skip
    row = judged_cell(tmp_path, body, "openai:m", path="/v1", key="OPENAI_API_KEY")
    assert row == ("failed", 0.1)  # ('passed', 1.0) before
