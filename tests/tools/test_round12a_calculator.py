"""The calculator's work on huge integers (adversary round 12 part A, issue 34 item 2). The tool
runs on the event loop; before, 16 divisions of a million-bit integer by a half-million-bit one
(480 characters, each operand within the million-bit cap) took 25 s of CPU there (16 such
multiplications 5.6 s), and neither the tool timeout nor Ctrl-C could be heard. Now each
expression has a budget of limb operations, taken before each operation is computed: such an
expression is an error result at once, and ordinary big-number arithmetic still answers."""

from __future__ import annotations

import pytest

import harness
from harness.errors import ToolError
from harness.tools._calculator import calculate

DIVISION = "(7**35)**10000//(7**35)**5000"
SLOW = [
    "+".join([DIVISION] * 16),
    "+".join(["(3**31)**10000*(3**31)**10000"] * 8),
    "(3**62)**10000%((3**31)**10000+1)",
]


@pytest.mark.parametrize("expression", SLOW, ids=["divisions", "multiplications", "one-modulo"])
def test_arithmetic_past_the_budget_is_refused_before_it_runs(expression: str) -> None:
    with pytest.raises(ToolError, match="too much arithmetic on huge numbers"):
        calculate(expression)


@pytest.mark.parametrize(
    ("expression", "answer"),
    [("2**10000 % 1000", "376"), ("9**9999 % 10**9", "900488889"),
     ("(10**200+1)**10 % 97", "86"), ("7**10000 // 3**5000 % 1000", "711"),
     ("10**300 // 7 % 1000", "857")],
)  # fmt: skip
def test_ordinary_big_arithmetic_still_answers(expression: str, answer: str) -> None:
    assert calculate(expression) == answer


def test_in_a_run_the_refusal_is_an_error_result_and_the_run_goes_on() -> None:
    call = {"name": "calculator", "arguments": {"expression": SLOW[0]}}
    result = harness.run(
        "go", provider="mock", tools=["calculator"],
        provider_opts={"turns": [{"tool_calls": [call]}, {"text": "done"}]},
    )  # fmt: skip
    assert result.finish_reason == "stop"
    (message,) = [m for m in result.messages if m.role == "tool"]
    assert message.content.startswith("error: too much arithmetic on huge numbers")
