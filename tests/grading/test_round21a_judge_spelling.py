"""A judge's overall verdict spelt otherwise than the grader reads it, or given twice (issue
34, adversary round 21, part A).

Round 19's rule reads the shallowest objects holding ``passed`` or ``score``: an overall
verdict keyed ``"Passed"``, ``"PASSED"``, ``"Score"`` or ``"passed "`` (as small models write
it) was passed over for a criterion's inside it or beside it, and ``{"passed": false, ...,
"passed": true}`` was read by JSON's last-wins rule: each stored **passed**. Now a verdict the
grader cannot read (a key reading as ``passed``, ``pass`` or ``score`` spelt otherwise, at the
verdict's level or above; the key given twice with other values) leaves no verdict: an error
cell, as an unreadable verdict."""

from __future__ import annotations

import pytest

from harness.grading import grade
from tests.grading.test_judge_grader import answered, mock_judge

NO_VERDICT = {
    "capitalised-over-criteria": '{"Passed": false, "criteria": {"accuracy": {"passed": true}}}',
    "upper-beside-score": '{"PASSED": false, "score": 1}',
    "score-capitalised": '{"Score": 0.1, "criteria": [{"score": 1.0}]}',
    "trailing-space": '{"passed ": false, "criteria": {"a": {"passed": true}}}',
    "nested-overall": '{"overall": {"Passed": false}, "criteria": {"a": {"passed": true}}}',
    "prose-beside": 'Verdict: {"Passed": false} details: {"passed": true}',
    "pass-key": '{"pass": false, "checks": [{"passed": true}, {"passed": true}]}',
    "given-twice": '{"passed": false, "explanation": "wrong", "passed": true}',
    "score-twice": '{"score": 0.1, "score": 0.9}',
}


@pytest.mark.parametrize("case", sorted(NO_VERDICT))
def test_a_verdict_spelt_otherwise_or_given_twice_is_no_verdict(case: str) -> None:
    verdict = grade(mock_judge(NO_VERDICT[case]), answered())
    assert not verdict.passed, verdict.explanation  # passed on 84cec7a
    assert verdict.error
    assert "gave no verdict" in verdict.explanation


@pytest.mark.parametrize(
    ("reply", "passed", "score"),
    [
        ('{"passed": false, "criteria": {"a": {"Passed": true}}}', False, 0.0),
        ('{"passed": true, "passed": true, "score": 0.8}', True, 0.8),
        ('{"passed": true, "passed_checks": 3, "score_note": "fine"}', True, 1.0),
    ],
)
def test_verdicts_spelt_as_asked_are_read(reply: str, passed: bool, score: float) -> None:
    verdict = grade(mock_judge(reply), answered())
    assert (verdict.passed, verdict.score, verdict.error) == (passed, score, False)
