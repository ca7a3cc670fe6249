"""The ``json_schema`` grader reads a reply's fenced blocks in linear time (issue 34, adversary
round 22, part A).

An answer that is not JSON is searched for a fenced block that is, with
``[ \\t]*(?:json)?[ \\t]*\\n`` after the fence: after a fence and a run of blanks with no line
break, every split of the run between the two stars was tried, quadratic. A fence and 20,000
spaces took 0.34 s; a megabyte, about 14 minutes on the grading thread holding the GIL (the
event loop, every other cell, Ctrl-C). The pattern is possessive now; its blocks are the old
one's."""

from __future__ import annotations

import random
import re

import pytest

import harness
from harness.grading import grade, parse_grader
from harness.grading._structured import _FENCED_JSON

_OLD = re.compile(r"```[ \t]*(?:json)?[ \t]*\n(.*?)```", re.DOTALL | re.I)


@pytest.mark.timeout(60)  # a fraction of a second here; over a minute on 0624268
def test_a_fence_and_a_run_of_blanks_is_graded_in_linear_time() -> None:
    answer = "```" + " \t" * 150_000 + "x"
    result = harness.run("x", provider="mock", provider_opts={"turns": [{"text": answer}]})
    verdict = grade(parse_grader({"kind": "json_schema", "schema": {"type": "object"}}), result)
    assert (verdict.passed, verdict.error) == (False, False)
    assert "not JSON" in verdict.explanation


def test_a_fenced_block_after_blanks_is_still_read() -> None:
    answer = 'see ```json   \t\n{"a": 1}\n``` and ```  \n[2]```'
    result = harness.run("x", provider="mock", provider_opts={"turns": [{"text": answer}]})
    verdict = grade(parse_grader({"kind": "json_schema", "schema": {"type": "object"}}), result)
    assert verdict.passed, verdict.explanation


@pytest.mark.parametrize("seed", range(2))
def test_the_blocks_found_are_the_old_patterns(seed: int) -> None:
    rng = random.Random(seed)
    pieces = ["```", "`", " ", "\t", "json", "JSON", "js", "\n", "{}", "x", "``"]
    for _ in range(40_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        assert _FENCED_JSON.findall(text) == _OLD.findall(text), text
