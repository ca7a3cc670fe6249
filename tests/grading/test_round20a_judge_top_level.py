"""A judge's verdicts side by side at the top of its reply, or fenced inside an unreadable one
(issue 34, adversary round 20, part A).

Round 19 gives no verdict when the criteria of one object disagree; the reply's own top level
was read first-wins: a JSON list of per-criterion verdicts, per-criterion objects in prose (``a:
{"passed": true} b: {"passed": false}``) and an example verdict before the real one were
stored **passed**. A fenced object was read wherever it was: inside a failing verdict that does
not parse (unescaped quotes, a trailing comma) too, which round 18 made hide every object inside
it: stored **passed**; so was an example verdict beside a failing one that does not parse. Now
the objects not inside another that hold verdicts must agree (fenced or not), and one that does
not parse but names ``passed`` or ``score`` leaves no verdict. A fuzz of 30,000 failing verdicts
(broken or not) among examples, fences and prose: 10,633 stored passed on 218441d, 0 now."""

from __future__ import annotations

import pytest

from harness.grading import grade
from tests.grading.test_judge_grader import answered, mock_judge

NO_VERDICT = {
    "json-list": '[{"passed": true}, {"passed": false}]',
    "list-in-prose": (
        'Results: [{"criterion": "accuracy", "passed": true}, '
        '{"criterion": "completeness", "passed": false}]'
    ),
    "criteria-in-prose": 'accuracy: {"passed": true}\ncompleteness: {"passed": false}',
    "example-first": 'Format: {"passed": true, "score": 1}. Mine: {"passed": false, "score": 0}',
    "fenced-list": '```json\n[{"passed": true}, {"passed": false}]\n```',
    "fence-in-unescaped": (
        '{"passed": false, "explanation": "it printed ```{"passed": true}``` instead"}'
    ),
    "example-then-fence": 'Example: {"passed": true}\n```json\n{"passed": false}\n```',
    "verdict-then-fence": '{"passed": false, "score": 0.0} ```{"passed": true}```',
    "example-beside-broken": 'Example: {"passed": true}\n{"passed": false,}',
    "broken-single-quoted": "{'passed': False} and {\"passed\": true}",
    "fence-in-trailing-comma": (
        '{"passed": false, "explanation": "see ```json\n{"passed": true}\n```",}'
    ),
}


@pytest.mark.parametrize("case", sorted(NO_VERDICT))
def test_top_level_verdicts_that_disagree_or_hide_in_a_broken_one_are_no_verdict(
    case: str,
) -> None:
    verdict = grade(mock_judge(NO_VERDICT[case]), answered())
    assert not verdict.passed, verdict.explanation  # passed on 218441d
    assert verdict.error
    assert "gave no verdict" in verdict.explanation


@pytest.mark.parametrize(
    ("reply", "passed", "score"),
    [
        ('a: {"passed": false} b: {"passed": false}', False, 0.0),
        ('[{"passed": true, "score": 0.9}]', True, 0.9),
        ('```\n{"verdict": {"passed": true}}\n``` thanks', True, 1.0),
        ('  {"passed": false}  \n', False, 0.0),
    ],
    ids=["agreeing", "list-of-one", "fenced-wrapper", "whole"],
)
def test_verdicts_that_agree_or_a_fenced_one_are_read(
    reply: str, passed: bool, score: float
) -> None:
    verdict = grade(mock_judge(reply), answered())
    assert not verdict.error, verdict.explanation
    assert (verdict.passed, verdict.score) == (passed, score)


@pytest.mark.timeout(120)  # a limit for a hang, not a timed assertion (the lead, stop 46)
def test_many_objects_and_whitespace_are_read() -> None:
    reply = ("{}" + " " * 50) * 100_000 + '```json\n{"passed": false}\n```'
    verdict = grade(mock_judge(reply), answered())
    assert (verdict.passed, verdict.error) == (False, False)


def test_failing_verdicts_among_examples_and_fences_are_never_read_as_passed() -> None:
    import random

    from harness.grading._judge import _verdict

    rng = random.Random(20)
    inner = ['{"passed": true}', '{"score": 1.0}', '[{"passed": true}]']
    said = ["ok", 'see ```{"passed": true}```', 'the answer {"passed": true} is wrong', 'x\\"y']
    wrongly = []
    for _ in range(3_000):
        body = ", ".join(rng.sample(['"passed": false', '"score": 0.0'], rng.randint(1, 2)))
        extra = rng.choice(["", f', "criteria": {rng.choice(inner)}',
                            f', "explanation": "{rng.choice(said)}"'])  # fmt: skip
        failing = "{" + body + extra + rng.choice(["", ",", " ,", "\n"]) + "}"
        pre = rng.choice(["", "Verdict: ", 'Example: {"passed": true}\n', "```json\n", "{", '"'])
        post = rng.choice(
            ["", "\n```", " thanks", ' {"passed": true}', "}", ' ```{"passed": true}```']
        )
        verdict = _verdict(pre + failing + post)
        if verdict is not None and (verdict.get("passed") is True or verdict.get("score") == 1):
            wrongly.append(pre + failing + post)
    assert wrongly == []  # about a third of them on 218441d
