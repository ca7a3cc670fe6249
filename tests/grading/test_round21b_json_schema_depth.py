"""Faults found by adversary round 21, part B (issue 34), in the ``json_schema`` grader: Python's
recursion limit. A model's answer nested past the JSON parser (100,000 ``[``) made the cell a
grader error (``RecursionError``: left out of the pass rates, "re-run with --retry-errors"),
its fenced blocks never tried; an answer of 900 nested lists against a recursive schema
(``items: {$ref: "#"}``) likewise; a schema referring to itself without end (``$ref: "#"``)
passed ``suites validate`` and made every cell a grader error. Each fails on 84cec7a."""

from __future__ import annotations

import pytest

import harness
from harness.grading import grade, parse_grader


def _graded(schema: dict[str, object], reply: str) -> tuple[bool, bool, str]:
    result = harness.run("t", provider="mock", provider_opts={"turns": [{"text": reply}]})
    verdict = grade(parse_grader({"kind": "json_schema", "schema": schema}), result)
    return verdict.passed, verdict.error, verdict.explanation


def test_an_answer_nested_past_the_parser_fails() -> None:
    passed, error, said = _graded({"type": "array"}, "[" * 100_000 + "]" * 100_000)
    assert (passed, error) == (False, False)
    assert "nested too deeply" in said


def test_a_fenced_block_after_a_deep_blob_is_read() -> None:
    reply = "[" * 100_000 + "\n```json\n[1, 2]\n```\n"
    assert _graded({"type": "array", "items": {"type": "integer"}}, reply)[:2] == (True, False)


@pytest.mark.parametrize(
    "schema",
    [
        {"items": {"$ref": "#"}},
        {"$dynamicAnchor": "x", "items": {"$dynamicRef": "#x"}},
    ],
)
def test_an_answer_nested_past_the_validator_fails(schema: dict[str, object]) -> None:
    passed, error, said = _graded(schema, "[" * 900 + "]" * 900)
    assert (passed, error) == (False, False)
    assert "900 levels deep" in said


@pytest.mark.parametrize("schema", [{"$ref": "#"}, {"allOf": [{"$ref": "#"}]}])
def test_a_schema_referring_to_itself_without_end_is_refused(schema: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="refers to itself without end"):
        parse_grader({"kind": "json_schema", "schema": schema})


def test_a_recursive_schema_still_validates_shallow_answers() -> None:
    schema: dict[str, object] = {"type": "array", "items": {"$ref": "#"}}
    assert _graded(schema, "[[], [[]]]")[:2] == (True, False)
    assert _graded(schema, "[[], [1]]")[:2] == (False, False)
