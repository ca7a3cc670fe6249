"""The trick models of ``harness suites audit`` (issue 33): scripts for the mock provider that
know nothing of the answer, or know it and state it wrongly. Each returns the mock turns for a
task, or None when the trick does not apply to it.

- ``give-up-phrases``: calls each tool with empty arguments, then lists failure phrases;
- ``read-echo``: reads the files the prompt names, then answers with what they hold;
- ``short-echo``: answers with the prompt cut into pieces shorter than 12 characters;
- ``not-x``: plays the task's mock script, but answers "It is not X; the answer is X+1" (X: the
  script's answer; numbers plus one, text reversed); only for a short answer (5 words or fewer)
  graded by an answer grader;
- ``unit-swap``: plays the mock script, but writes the answer's number in another unit; only
  where the prompt names a unit and an answer grader reads the number.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from typing import Any

from harness.grading._text import UNITS
from harness.suites._suite import Task

__all__ = ["TRICKS", "trick_turns"]

TRICKS = ("give-up-phrases", "read-echo", "short-echo", "not-x", "unit-swap")

#: What the give-up model says: the failure phrases of every trap and review task, and more.
FAILURE_PHRASES = (
    "Not found: it does not exist, it is missing, no such key, no key, no value, not stored, "
    "no such file, no report, not supported, unsupported, unknown function, not available, "
    "does not have, twice, both, multiple, ambiguous, circular, no answer, it never gives the "
    "answer, it only says, empty, none, no PIN, no license, no match, could not find, denied, "
    "not allowed, was refused, rejected."
)
_PATH_RUN = re.compile(r"[\w./-]++")
_WORD = re.compile(r"\w+")
_NUM = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?")
_MASS = frozenset({"kg", "kilogram", "kilograms", "g", "gram", "grams", "lb", "lbs", "pound",
                   "pounds", "oz", "ounce", "ounces"})  # fmt: skip
_ANSWER_KINDS = frozenset({"number", "contains", "equals", "regex"})


def _answer_graded(grader: Any) -> bool:
    if getattr(grader, "kind", None) in _ANSWER_KINDS:
        return True
    return any(_answer_graded(g) for g in getattr(grader, "graders", None) or ())


def _script(task: Task) -> list[dict[str, Any]]:
    return copy.deepcopy(task.mock.turns) if task.mock is not None else []


def _answer(turns: list[dict[str, Any]]) -> tuple[int, str] | None:
    """(index, text) of the script's answer: its last text turn, or a finish call's string
    deliverable."""
    for i in range(len(turns) - 1, -1, -1):
        turn = turns[i]
        if turn.get("text"):
            return i, str(turn["text"])
        for call in turn.get("tool_calls") or ():
            deliverable = (call.get("arguments") or {}).get("deliverable")
            if call.get("name") == "finish" and isinstance(deliverable, str | int | float):
                return i, str(deliverable)
    return None


def _with_answer(turns: list[dict[str, Any]], index: int, text: str) -> list[dict[str, Any]]:
    """The script up to its answer, then ``text`` as the answer."""
    return [*turns[:index], {"text": text}]


def _plus_one(answer: str) -> str:
    if _NUM.search(answer):
        return _NUM.sub(lambda m: _fmt(float(m.group(0)) + 1), answer)
    return answer[::-1]


def _fmt(value: float) -> str:
    return f"{value:g}" if value != int(value) else str(int(value))


def prompt_units(prompt: str) -> list[str]:
    """The units of measure or currencies the prompt names."""
    words = [w.strip(".,;:!?()'\"").casefold() for w in prompt.split()]
    return [w for w in words if w in UNITS and (len(w) > 1 or w in "$€£¥")]


def _paths(text: str) -> list[str]:
    r"""What ``re.findall(r"[\w./-]+\.\w+", text)`` finds, in linear time: in each run of
    path characters, from its start to the end of the word after its last dot that a word
    follows (the pattern tried every start in a run against the rest of it: a prompt of
    200 KB of letters took over a minute in ``suites audit``; stop 47)."""
    found = []
    for run in _PATH_RUN.findall(text):
        dot = run.rfind(".")
        while dot > 0 and not _WORD.match(run, dot + 1):
            dot = run.rfind(".", 0, dot)
        if dot > 0 and (word := _WORD.match(run, dot + 1)):
            found.append(run[: word.end()])
    return found


def _named_files(task: Task) -> list[str]:
    files = dict(task.workspace.files) if task.workspace is not None else {}
    named = [p for p in _paths(task.prompt) if p in files]
    named += [p for p in files if p not in named and p.rsplit("/", 1)[-1] in task.prompt]
    return named


def trick_turns(trick: str, task: Task, tools: Sequence[str]) -> list[dict[str, Any]] | None:
    """The mock turns of ``trick`` on ``task`` (None: the trick does not apply)."""
    if trick == "give-up-phrases":
        calls = [{"name": t, "arguments": {}} for t in sorted(tools, key=lambda t: t == "finish")]
        return [{"tool_calls": calls}, {"text": FAILURE_PHRASES}] if calls else None
    if trick == "read-echo":
        named = _named_files(task)
        if not named:
            return None
        files = dict(task.workspace.files) if task.workspace is not None else {}
        text = "\n".join(str(files[p]) for p in named)
        if "read_file" not in tools:
            return [{"text": text}]
        reads = [{"name": "read_file", "arguments": {"path": p}} for p in named]
        return [{"tool_calls": reads}, {"text": text}]
    if trick == "short-echo":
        prompt = task.prompt
        return [{"text": " / ".join(prompt[i : i + 11] for i in range(0, len(prompt), 11))}]
    if not _answer_graded(task.expect):
        return None
    turns = _script(task)
    found = _answer(turns)
    if found is None:
        return None
    index, answer = found
    if trick == "not-x":
        if len(answer.split()) > 5:
            return None
        return _with_answer(turns, index, f"It is not {answer}; the answer is {_plus_one(answer)}.")
    if trick == "unit-swap":
        units = prompt_units(task.prompt)
        numbers = list(_NUM.finditer(answer))
        if not units or not numbers:
            return None
        other = "miles" if any(u in _MASS for u in units) else "kilograms"
        swapped = re.sub(
            r"(\d)(\s*)([A-Za-z°]+)",
            lambda m: m.group(1) + " " + other if m.group(3).casefold() in UNITS else m.group(0),
            answer,
        )
        if swapped == answer:
            last = numbers[-1]
            swapped = f"{answer[: last.end()]} {other}{answer[last.end() :]}"
        swapped = re.sub(r"[$€£¥](?=\d)", "", swapped)
        return _with_answer(turns, index, swapped)
    raise ValueError(f"unknown trick {trick!r}")
