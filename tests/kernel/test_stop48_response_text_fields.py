"""A plug-in provider's ``Response`` whose text fields are not text is its invalid response
(stop 48).

The kernel checked a plug-in's ``text``, ``tool_calls``, ``usage``, ``cost_usd``, ``retries``
and ``tool_call_repairs`` (adversary round 16, part A), but kept ``thinking``,
``finish_reason``, ``model``, ``id``, ``repaired`` and ``tool_call_error`` as they came: an
``int`` went into the transcript and the Result typed as text, and an object whose ``str()``
raised into the Result's ``error_diagnostic``, which then could not be written as JSON (found
by a fuzz of plug-in answers: 1,500 runs)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import Answers

import harness


class Unprintable:
    def __str__(self) -> str:
        raise ValueError("no text")

    __repr__ = __str__


CASES: dict[str, tuple[dict[str, Any], str]] = {
    "int-thinking": ({"thinking": 5}, "thinking is a int"),
    "int-finish": ({"finish_reason": 5}, "finish_reason is a int"),
    "unprintable-model": ({"model": Unprintable()}, "model is a Unprintable"),
    "unprintable-id": ({"id": Unprintable()}, "id is a Unprintable"),
    "list-repaired": ({"repaired": ["x"]}, "repaired is a list"),
    "unprintable-error": ({"tool_call_error": Unprintable()}, "tool_call_error is a Unprintable"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_text_field_that_is_not_text_is_the_providers_invalid_response(case: str) -> None:
    fields, said = CASES[case]
    result = harness.run("hi", provider=Answers(harness.Response(text="hi", **fields)))
    assert result.finish_reason == "error_during_execution"
    assert result.halted_reason == (
        f"invalid_response: the provider answered a Response whose {said}, not a str"
    )
    json.loads(result.model_dump_json())  # the Result can be stored


def test_text_fields_of_a_str_subclass_are_kept_as_plain_text() -> None:
    class Loud(str):
        def strip(self, *args: Any) -> str:
            raise RuntimeError("its own code")

    answer = harness.Response(text="hi", thinking=Loud("mull"), model=Loud("m2"))
    result = harness.run("hi", provider=Answers(answer))
    assert result.finish_reason == "stop", result.halted_reason
    assert type(result.messages[-1].reasoning) is str
