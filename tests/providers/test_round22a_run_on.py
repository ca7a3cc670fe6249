"""A line-format reply's run-on is cut at its closing tag wherever case-folding moves it (issue
34, adversary round 22, part A).

Under the one-line protocol a reply holds one call, and what follows its ``</tool_call>`` is
the model going on past its turn: dropped. The tag was found in ``text.lower()`` and the reply
cut at that place, but lowering ``İ`` gives two characters: each one before the call kept a
character of the run-on. A reply with as many ``İ`` as its run-on is long kept a second,
invented call, and the run executed it."""

from __future__ import annotations

from harness.providers._base import Response
from harness.providers._text_tools import drop_run_on, finish_response

_SECOND = '<tool_call>{"name": "rm", "arguments": {}}</tool_call>'


def test_the_run_on_after_dotted_capital_is_is_dropped() -> None:
    text = "İ" * 6 + ' <tool_call>{"name": "f", "arguments": {}}</TOOL_call>\nRESULT: 42'
    assert drop_run_on(text, "line") == text[: text.index("\nRESULT")]


def test_a_run_on_call_is_not_executed() -> None:
    reply = Response(text="İ" * len(_SECOND) + ' <tool_call>{"name": "f", "arguments": {}}'
                     "</tool_call>" + _SECOND)  # fmt: skip
    finish_response(reply, "line")
    assert [call.name for call in reply.tool_calls] == ["f"]  # ["f", "rm"] on 0624268
