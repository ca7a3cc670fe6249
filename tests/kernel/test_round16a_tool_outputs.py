"""A tool's ``ToolOutput`` that skips its own checks, or whose ``ui`` is not a ``UIPayload``
(issue 34, adversary round 16, part A).

Round 14 made ``ToolOutput.__post_init__`` show a ``content`` that is not a ``str`` as text; a
subclass replacing ``__post_init__`` skipped that: ``content=None`` ended the run ``internal
error: TypeError`` (a logged traceback), an ``int`` made no row for its cell (the CLI said the
executor never handed it in). A ``ui`` that is a dict, a list or any object printed the
tracer's ``AttributeError`` traceback on the terminal; ``assigns`` whose truth value raises
ended the run ``error_during_execution``. Now the kernel checks the fields as it takes them:
``content`` is shown as a plain value is, a bad ``ui`` or ``assigns`` is the tool's crash told
to the model.
"""

from __future__ import annotations

from typing import Any

import pytest

import harness
from harness.core._messages import UIPayload
from harness.providers import MockProvider
from harness.telemetry import configure_tracing
from harness.tools import ToolOutput


class _Unchecked(ToolOutput):
    __slots__ = ()

    def __post_init__(self) -> None:  # skips ToolOutput's own check
        pass


class _NoTruth(dict[str, Any]):
    def __bool__(self) -> bool:
        raise RuntimeError("no bool")


def _run(value: Any, **options: Any) -> harness.Result:
    @harness.tool
    def odd(x: str) -> Any:
        """Answers an odd ToolOutput."""
        return value

    provider = MockProvider(
        turns=[{"tool_calls": [{"name": "odd", "arguments": {"x": "y"}}]}, {"text": "done"}]
    )
    return harness.run("hi", tools=[odd], provider=provider, **options)


def _told(result: harness.Result) -> str:
    return next(m.content for m in result.messages if m.role == "tool")


@pytest.mark.parametrize(
    ("content", "shown"), [(None, ""), (12345, "12345"), ([1, 2], "[1, 2]")], ids=str
)
def test_an_unchecked_content_is_shown_as_a_plain_value(content: Any, shown: str) -> None:
    result = _run(_Unchecked(content))
    assert result.finish_reason == "stop", result.halted_reason  # internal error before
    assert _told(result) == shown


@pytest.mark.parametrize(
    "ui",
    [{"kind": "diff"}, [1], object(), UIPayload(5, "x")],  # type: ignore[arg-type]
    ids=["dict", "list", "object", "int-kind"],
)
def test_a_ui_that_is_not_a_ui_payload_is_the_tools_crash(
    ui: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    tracing = configure_tracing(in_memory=True)
    result = _run(ToolOutput("ok", ui=ui), tracer_provider=tracing.provider)
    assert result.finish_reason == "stop", result.halted_reason
    assert _told(result).startswith("error: tool crashed: its ToolOutput cannot be taken: ")
    assert "Traceback" not in capsys.readouterr().err  # the tracer's AttributeError before


def test_assigns_whose_truth_raises_are_the_tools_crash() -> None:
    result = _run(ToolOutput("ok", assigns=_NoTruth(a=1)))
    assert result.finish_reason == "stop", result.halted_reason  # error_during_execution before
    assert _told(result) == (
        "error: tool crashed: its state updates cannot be merged: RuntimeError: no bool"
    )
