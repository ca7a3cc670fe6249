"""Graders credit what the model did: a reviewer's edit runs, but ``tool_calls`` (and
``model_calls``) read the call the model proposed; the number grader reads the answer's number,
skipping numbers the answer copied from the prompt."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import harness
from harness.grading import grade, parse_grader
from harness.grading._structured import model_calls
from harness.grading._text import answer_number, copied_spans
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
    verdict = grade(proposal, result, tmp_path)
    assert not verdict.passed
    assert '"new": "8443"' in verdict.explanation
    files = parse_grader({"kind": "file_contains", "path": "server.ini", "value": "8443"})
    assert grade(files, result, tmp_path).passed  # the file alone would credit the reviewer


async def test_the_models_own_right_proposal_passes(tmp_path: Path) -> None:
    result = await _edited_run(tmp_path, FIXED)
    proposal = parse_grader(
        {"kind": "tool_calls", "value": "edit_file", "arguments": {"path": "server", "new": 8443}}
    )
    assert grade(proposal, result, tmp_path).passed
    other = tmp_path / "other"
    other.mkdir()
    empty = await _edited_run(other, {})
    assert (other / "server.ini").read_text() == "port = 8443\n"  # the reviewer's edit ran
    assert not grade(proposal, empty, other).passed  # `{}` is not a proposal


def test_answer_number_skips_numbers_copied_from_the_prompt() -> None:
    prompt = "Pens cost 3 dollars and notebooks cost 7 dollars. How much change from 50?"
    echo = prompt + " 13"
    assert answer_number(echo) == 3.0  # the prompt's own first number
    assert answer_number(echo, copied_spans(echo, prompt)) == 13.0  # the answer after the echo
    assert answer_number(prompt, copied_spans(prompt, prompt)) is None
    assert answer_number("43.$$45=443.$$12=77.5") == 43.0
    grader = parse_grader({"kind": "number", "value": 47})
    result = harness.run(prompt, provider=MockProvider([{"text": prompt}]))
    verdict = grade(grader, result)
    assert not verdict.passed
    assert "outside text copied from the prompt" in verdict.explanation
    right = harness.run(prompt, provider=MockProvider([{"text": "**47** dollars"}]))
    assert grade(grader, right).passed
