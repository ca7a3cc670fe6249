"""A provider's token counts and cost that are not counts or finite numbers, and its stream's
deltas that are not text (issue 34, adversary round 17, part A).

Round 16 checked that a plug-in provider's ``usage`` is a ``TokenUsage``, not what it holds: a
``str`` or ``None`` count ended the run as the harness's own ``TypeError``; NaN or infinite
counts made the cell's row unstorable (the cell lost, "never handed in its result"); a count
past 2^63 (also from a live server: ``"prompt_tokens": 10**29``) ended ``harness run`` with exit
2 and no row stored (next file); an ``int`` cost of 10^400 raised ``OverflowError``; an infinite
cost lost the cell. A delta of an ``int``, ``None`` or ``bytes`` passed to ``on_delta`` printed
the tracer's traceback and lost the run's spans. Now each is the provider's failure, named.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest
from conftest import Answers

import harness
from harness.core._budget import Budget
from harness.core._messages import TokenUsage

USAGES = {
    "str": (TokenUsage(input_tokens="5"), "input_tokens is '5', not a count"),  # type: ignore[arg-type]
    "none": (TokenUsage(output_tokens=None), "output_tokens is None, not a count"),  # type: ignore[arg-type]
    "nan": (TokenUsage(input_tokens=float("nan")), "input_tokens is nan, not a count"),  # type: ignore[arg-type]
    "inf": (TokenUsage(reasoning_tokens=float("inf")), "reasoning_tokens is inf, not a count"),  # type: ignore[arg-type]
    "negative": (TokenUsage(cache_read_tokens=-5), "cache_read_tokens is -5, not a count"),
    "past-2^63": (TokenUsage(input_tokens=2**63), "input_tokens is 9.22e+18, past 1e+12"),
}


@pytest.mark.parametrize("case", sorted(USAGES))
def test_a_usage_that_holds_no_count_is_the_providers_invalid_response(case: str) -> None:
    usage, said = USAGES[case]
    result = harness.run("hi", provider=Answers(harness.Response(text="hi", usage=usage)))
    assert result.finish_reason == "error_during_execution"
    assert result.halted_reason == (
        f"invalid_response: the provider answered a Response whose usage's {said}"
    )


@pytest.mark.parametrize(
    ("cost", "said"),
    [(10**400, "1000000000000000000000000000000000000000..."), (float("inf"), "inf")],
    ids=["int-past-float", "inf"],
)
def test_a_cost_that_is_no_finite_number_is_the_providers_invalid_response(
    cost: Any, said: str
) -> None:
    result = harness.run("hi", provider=Answers(harness.Response(text="hi", cost_usd=cost)))
    assert result.halted_reason == (
        f"invalid_response: the provider answered a Response whose cost_usd is {said}, "
        "not a finite number"
    )  # OverflowError (the harness's own) / stored no row before


def test_a_nan_cost_is_still_an_unknown_cost() -> None:
    result = harness.run("hi", provider=Answers(harness.Response(text="hi", cost_usd=float("nan"))))
    assert result.finish_reason == "stop"
    assert result.cost_usd is None


@pytest.mark.parametrize(
    ("delta", "said"),
    [
        (("content", 5), "'content' and a int"),
        (("thinking", None), "'thinking' and a NoneType"),
        (("content", b"\x1b[2J"), "'content' and a bytes"),
        (("bogus", "x"), "'bogus' and a str"),
    ],
    ids=["int", "none", "bytes", "kind"],
)
def test_a_delta_that_is_not_text_is_the_providers_crash(delta: Any, said: str) -> None:
    provider = Answers(harness.Response(text="hi"), streaming=True, deltas=[delta])
    result = harness.run("hi", provider=provider, on_event=lambda event: None)
    assert result.halted_reason == (
        "unknown: provider crashed: TypeError: on_delta(kind, text) takes 'content' or "
        f"'thinking' and a str, not {said}"
    )  # 'stop', with the tracer's traceback printed under harness run


def test_text_deltas_still_stream() -> None:
    seen: list[Any] = []
    provider = Answers(
        harness.Response(text="hi"), streaming=True, deltas=[("content", "h"), ("content", "i")]
    )
    result = harness.run("hi", provider=provider, on_event=seen.append)
    assert result.text == "hi"
    assert [e.text for e in seen if type(e).__name__ == "Content"] == ["h", "i"]


@harness.tool
def plain(x: str) -> str:
    """Answers."""
    return "ok"


def test_costs_summing_past_the_largest_float_stay_a_finite_cost() -> None:
    # A provider's call of $1e308 is refused since round 18 (MAX_CALL_COST_USD); the budget
    # still keeps a sum past the largest float at it.
    budget = Budget()
    budget.add(None, 1e308)
    budget.add(None, 1e308)
    assert budget.cost_usd == sys.float_info.max  # inf before: the cell's row was refused
