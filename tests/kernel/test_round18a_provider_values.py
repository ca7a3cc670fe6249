"""A provider's counts, cost and notes that pass round 17's checks but are not what they seem
(issue 34, adversary round 18, part A).

Round 17 checked a ``Response``'s counts with the plug-in's own comparisons and summed them as
they came: an ``int`` subclass whose ``<`` and ``>`` lie passed 10^30 tokens (every cell's row
refused: "never handed in its result"); a ``float`` cost whose comparisons raise or whose
``__radd__`` answers a ``str`` ended the run blaming ``RuntimeError`` or the harness's own
``TypeError``; ``retries`` of ``None`` or ``[1, 2]`` and ``tool_call_repairs`` of ``[1]`` too.
Two cells of $1.7e308 each (finite, under round 17's limit) summed to ``$inf`` in the run's
summary and ``harness report`` ended in an ``OverflowError`` traceback. A numpy count was
refused as ``input_tokens is np.int64(5), not a count``. Now the kernel takes plain values."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest
from conftest import Answers, plain

import harness
from harness.core._messages import TokenUsage


class _Lying(int):
    def __gt__(self, other: object) -> bool:
        return False

    def __lt__(self, other: object) -> bool:
        return False


class _Raising(float):
    def __lt__(self, other: object) -> bool:
        raise RuntimeError("lt boom")

    def __gt__(self, other: object) -> bool:
        raise RuntimeError("gt boom")


class _Odd(float):
    def __radd__(self, other: object) -> Any:
        return "bad"

    def __float__(self) -> float:
        return 1.0


_LYING = TokenUsage(input_tokens=_Lying(10**30))
REFUSED: dict[str, tuple[dict[str, Any], str]] = {
    "lying-int": ({"usage": _LYING}, "usage's input_tokens is 1e+30, past 1e+12"),
    "retries-none": ({"retries": None}, "retries are not a list of str"),
    "retries-ints": ({"retries": [1, 2]}, "retries are not a list of str"),
    "repairs-ints": ({"tool_call_repairs": [1]}, "tool_call_repairs are not a list of str"),
    "cost-past-1e9": ({"cost_usd": 1.7e308}, "cost_usd is 1.7e+308, past $1e+09"),
    "odd-float-inf": ({"cost_usd": _Odd("inf")}, "cost_usd is inf, not a finite number"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_response_field_that_is_not_what_it_seems_is_an_invalid_response(case: str) -> None:
    fields, said = REFUSED[case]
    result = harness.run("hi", provider=Answers(harness.Response(text="hi", **fields)))
    assert result.finish_reason == "error_during_execution"
    assert (
        result.halted_reason == f"invalid_response: the provider answered a Response whose {said}"
    )


@pytest.mark.parametrize(
    ("cost", "taken"),
    [(_Raising(0.25), 0.25), (_Odd(0.5), 0.5), (np.float32(0.5), 0.5)],
    ids=["raising-compare", "odd-radd", "numpy-float"],
)
def test_a_cost_is_taken_as_a_plain_float(cost: Any, taken: float) -> None:
    result = harness.run("hi", provider=Answers(harness.Response(text="hi", cost_usd=cost)))
    assert result.finish_reason == "stop", result.halted_reason  # RuntimeError: lt boom before
    assert result.cost_usd == taken
    assert type(result.cost_usd) is float
    assert type(result.calls[0].cost_usd) is float


def test_numpy_counts_are_counts() -> None:
    usage = TokenUsage(input_tokens=np.int64(5), output_tokens=np.uint32(3))  # type: ignore[arg-type]
    result = harness.run("hi", provider=Answers(harness.Response(text="hi", usage=usage)))
    assert result.finish_reason == "stop", result.halted_reason  # "np.int64(5), not a count"
    assert (result.usage.input_tokens, result.usage.output_tokens) == (5, 3)
    assert type(result.usage.input_tokens) is int


class _CancellingText(str):
    """A reply text whose methods cancel the run's task (or raise) when the kernel uses them."""

    raising = False

    def _run(self) -> None:
        if self.raising:
            raise RuntimeError("str boom")
        task = asyncio.current_task()
        assert task is not None
        task.cancel()

    def strip(self, chars: str | None = None) -> str:
        self._run()
        return str.strip(self, chars)

    def __len__(self) -> int:
        self._run()
        return str.__len__(self)

    def __bool__(self) -> bool:
        self._run()
        return True


class _RaisingText(_CancellingText):
    raising = True


@pytest.mark.parametrize("kind", [_CancellingText, _RaisingText], ids=["cancels", "raises"])
def test_a_reply_text_is_taken_as_a_plain_str(kind: type[str]) -> None:
    result = harness.run("hi", provider=Answers(harness.Response(text=kind("hello"))))
    assert result.finish_reason == "stop", result.halted_reason  # CancelledError / RuntimeError
    assert result.text == "hello"
    assert type(result.text) is str


class _CopyCancels:
    def __deepcopy__(self, memo: Any) -> Any:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
        return self


class _CopyCancelsDict(dict[str, Any]):
    def __deepcopy__(self, memo: Any) -> Any:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
        return dict(self)


class _Calling(Answers):
    def __init__(self, arguments: Any) -> None:
        super().__init__(None)
        self.arguments, self.made = arguments, 0

    async def complete(self, request: Any, on_delta: Any = None) -> Any:
        self.made += 1
        if self.made == 1:
            return harness.Response(tool_calls=[harness.ToolCall("c1", "plain", self.arguments)])
        return harness.Response(text="done")


def test_tool_call_arguments_are_taken_as_plain_json_data() -> None:
    result = harness.run("hi", tools=[plain], provider=_Calling(_CopyCancelsDict(x="y")))
    assert result.text == "done", result.halted_reason  # raised CancelledError before
    assert [m.content for m in result.messages if m.role == "tool"] == ["ok"]


def test_tool_call_arguments_holding_no_json_value_are_an_invalid_response() -> None:
    result = harness.run("hi", tools=[plain], provider=_Calling({"x": _CopyCancels()}))
    assert result.halted_reason == (  # raised CancelledError before
        "invalid_response: the provider answered a Response whose fields cannot be read: "
        "TypeError: tool call 'plain': its arguments hold a _CopyCancels"
    )


def test_deep_arguments_from_a_plug_in_provider_are_the_models_error() -> None:
    deep: Any = "x"
    for _ in range(5_000):
        deep = [deep]
    result = harness.run("hi", tools=[plain], provider=_Calling({"x": deep}))
    assert result.text == "done", result.halted_reason
    tool = [m.content for m in result.messages if m.role == "tool"]
    assert "nested deeper than 100 levels" in tool[0]
