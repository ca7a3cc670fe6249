"""A judge's reply holding per-criterion verdicts and no overall one (issue 34, adversary round
19, part A).

Round 18 reads a parsed object without ``passed`` or ``score`` breadth first and takes the
first object holding one (``_judged``, ``harness/grading/_judge.py``): with sibling criteria
and no overall verdict, the first criterion is the verdict. ``{"accuracy": {"passed": true},
"completeness": {"passed": false}}`` and ``{"results": [{"passed": true}, {"passed": false}],
"overall": "fail"}`` are stored **passed**; ``{"tone": {"score": 1.0}, "facts": {"score":
0.0}}`` scores 1.0. Proposed (grading is the lead's this round): shallowest objects that
disagree are no verdict (the cell is an error), as an unreadable verdict is."""

from __future__ import annotations

import pytest

from harness.grading import grade
from tests.grading.test_judge_grader import answered, mock_judge

DISAGREEING = {
    "criteria-keys": '{"accuracy": {"passed": true}, "completeness": {"passed": false}}',
    "criteria-list": '{"results": [{"passed": true}, {"passed": false}], "overall": "fail"}',
    "scores": 'Scores: {"tone": {"score": 1.0}, "facts": {"score": 0.0}}',
}


@pytest.mark.parametrize("case", sorted(DISAGREEING))
def test_sibling_verdicts_that_disagree_are_no_verdict(case: str) -> None:
    verdict = grade(mock_judge(DISAGREEING[case]), answered())
    assert not verdict.passed  # the first criterion's passed on ca87ef3
    assert verdict.error
    assert "gave no verdict" in verdict.explanation


def test_sibling_verdicts_that_agree_are_read() -> None:
    reply = '{"accuracy": {"passed": false}, "completeness": {"passed": false}}'
    verdict = grade(mock_judge(reply), answered())
    assert (verdict.passed, verdict.error) == (False, False)
