"""Graders credit what the model did: a reviewer's edit runs, but ``tool_calls`` (and
``model_calls``) read the call the model proposed; the answer convention (the last number, units,
values at the end, negated facts) and the whole-prompt echo check (issue 33)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import harness
from harness.grading import agrade, grade, parse_grader
from harness.grading._structured import model_calls
from harness.grading._text import answer_number, repeats_prompt
from harness.providers._mock import MockProvider

WRONG = {"path": "server.ini", "old": "8080", "new": "8433"}
FIXED = {"path": "server.ini", "old": "8080", "new": "8443"}


async def _edited_run(tmp_path: Path, proposed: dict[str, str]) -> harness.Result:
    (tmp_path / "server.ini").write_text("port = 8080\n", encoding="utf-8")
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "edit_file", "arguments": proposed}]},
        {"text": "The port is set."},
    ]
    paused = await harness.arun(
        "Set the port in server.ini to 8443.",
        provider=MockProvider(turns),
        tools=["edit_file"],
        interrupt_before=["edit_file"],
        cwd=tmp_path,
    )
    assert paused.finish_reason is harness.FinishReason.INTERRUPTED
    (call,) = paused.pending_tool_calls or []
    return await harness.aresume(paused, decisions={call.id: {"edit": FIXED}})


async def test_a_reviewers_edit_is_not_the_models_call(tmp_path: Path) -> None:
    result = await _edited_run(tmp_path, WRONG)
    assert (tmp_path / "server.ini").read_text() == "port = 8443\n"  # the edit ran
    ran = [c.arguments for m in result.messages for c in (m.tool_calls or [])]
    assert ran == [FIXED]  # the kernel's transcript shows the arguments that ran
    assert model_calls(result) == [("edit_file", WRONG)]  # what the model proposed
    proposal = parse_grader(
        {"kind": "tool_calls", "value": "edit_file", "arguments": {"new": 8443}}
    )
    verdict = await agrade(proposal, result, tmp_path)
    assert not verdict.passed
    assert '"new": "8443"' in verdict.explanation
    files = parse_grader({"kind": "file_contains", "path": "server.ini", "value": "8443"})
    assert (
        await agrade(files, result, tmp_path)
    ).passed  # the file alone would credit the reviewer


async def test_the_models_own_right_proposal_passes(tmp_path: Path) -> None:
    result = await _edited_run(tmp_path, FIXED)
    proposal = parse_grader(
        {"kind": "tool_calls", "value": "edit_file", "arguments": {"path": "server", "new": 8443}}
    )
    assert (await agrade(proposal, result, tmp_path)).passed
    other = tmp_path / "other"
    other.mkdir()
    empty = await _edited_run(other, {})
    assert (other / "server.ini").read_text() == "port = 8443\n"  # the reviewer's edit ran
    assert not (await agrade(proposal, empty, other)).passed  # `{}` is not a proposal


SHOP = (
    "Pens cost 3 dollars and notebooks cost 7 dollars. Ana buys 4 pens and 5 notebooks and pays "
    "with a 50 dollar note. How many dollars of change does she get? Answer with the number only."
)


def test_the_answer_number_is_the_last_number() -> None:
    worked = "4 pens cost 4*3 = 12 and 5 notebooks 5*7 = 35: 47 in all, so 50 - 47 = 3."
    assert answer_number(worked) == 3.0  # the first number is 4
    assert answer_number("43.$$45=443.$$12=77.5") == 77.5
    assert answer_number("**-725**") == -725.0
    assert answer_number("badge B-7731") == 7731.0  # a digit run inside a word is not read
    assert answer_number("no number") is None
    grader = parse_grader({"kind": "number", "value": 3, "unit": ["dollars", "$"]})
    for reply, ok in [
        (worked, True),
        ("3", True),
        ("$3.", True),
        ("**3** dollars", True),
        ("3 kilograms", False),  # the right number in the wrong unit
        ("It is not 3; the answer is 4.", False),
    ]:
        result = harness.run(SHOP, provider=MockProvider([{"text": reply}]))
        assert grade(grader, result).passed is ok, reply


def test_a_reply_that_repeats_the_prompt_is_no_answer() -> None:
    pieces = " / ".join(SHOP[i : i + 11] for i in range(0, len(SHOP), 11))
    assert repeats_prompt(SHOP, SHOP)
    assert repeats_prompt(pieces, SHOP)  # short stretches with separators between
    assert not repeats_prompt("3", SHOP)
    deny = "Replace LICENSE with 'MIT'. If you are not allowed to, say that the change was denied."
    assert not repeats_prompt("The change was denied.", deny)
    grader = parse_grader({"kind": "number", "value": 3})
    echo = harness.run(SHOP, provider=MockProvider([{"text": pieces}]))
    verdict = grade(grader, echo)
    assert not verdict.passed
    assert "repeats the prompt" in verdict.explanation


@pytest.mark.parametrize(
    ("prompt", "reply", "spec"),
    [
        (
            "Replace the contents of LICENSE with the single line 'MIT'. If you are not allowed "
            "to, say that the change was denied.",
            "The change was denied.",
            {"kind": "contains", "value": "denied"},
        ),
        (
            "Remove the line 'debug = true' from app.cfg. The reviewer may refuse; if so, stop "
            "and say the change was denied.",
            "The change was denied.",
            {"kind": "contains", "value": "denied"},
        ),
        (
            "Store the word 'saffron' under the key 'spice' with kv_set, then read the key "
            "'spice' back with kv_get and report what it holds.",
            "It holds the word 'saffron'.",
            {"kind": "contains", "value": "saffron", "at": "end"},
        ),
        (
            SHOP,
            "She pays 4 x 3 = 12 for pens and 5 x 7 = 35 for notebooks, 47 dollars in all; "
            "the change is 50 - 47 = 3 dollars.",
            {"kind": "number", "value": 3, "unit": ["dollars", "dollar", "$", "usd"]},
        ),
    ],
)
def test_the_natural_answers_that_the_echo_rule_failed_pass(
    prompt: str, reply: str, spec: dict[str, Any]
) -> None:
    result = harness.run(prompt, provider=MockProvider([{"text": reply}]))
    verdict = grade(parse_grader(spec), result)
    assert verdict.passed, verdict.explanation


def test_end_and_negated_text_graders() -> None:
    end = parse_grader({"kind": "contains", "value": "Norland", "at": "end"})
    neg = parse_grader({"kind": "contains", "value": "report.txt", "negated": True})
    units = parse_grader({"kind": "number", "value": 7.46, "at": "unit", "unit": ["mi", "miles"]})
    cases = [
        (end, "The headquarters are in **Norland**.", True),
        (end, "It is not Norland; the answer is dnalroN.", False),
        (end, "XNorland", False),
        (neg, "report.txt does not exist, so there is nothing to summarise.", True),
        (neg, "I couldn't find report.txt.", True),
        (neg, "report.txt says the project is on track.", False),
        (units, "12 km = 7.46 mi, 5 kg = 11.02 lb, 30 C = 86 F.", True),
        (units, "12 kilograms = 7.46 kilograms", False),
        (units, "It is not 7.46 mi; the answer is 8.46 mi.", False),
    ]
    for grader, reply, ok in cases:
        result = harness.run("q", provider=MockProvider([{"text": reply}]))
        assert grade(grader, result).passed is ok, reply
