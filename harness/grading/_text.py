"""Text graders: ``equals``, ``contains``, ``regex``, ``number`` (the run's answer) and
``file_contains`` (a file in the workspace after the run).

``value`` is a string or a list of accepted strings (any one passing is enough); numbers in YAML
are read as their text (``value: 395`` is "395"). ``case_sensitive`` defaults to false.
``target`` picks the deliverable or the final text (default: the deliverable when the run was
submitted with one, else the final answer; a deliverable that is not a string is compared as
compact JSON).

Echoes do not pass: a match inside text that the answer copied from the task's prompt (a
stretch of :data:`ECHO_MIN_CHARS` or more characters that the prompt also has) is not counted, so
a model that repeats the question does not pass a task whose prompt holds the expected words.
A grader may allow it, with a reason (``allow_echo: "..."``).

``number`` reads the answer's number, not a digit run inside it: the first number in the answer
that is not inside text copied from the prompt (``1,234.5``, ``-3``, ``1e3``; Markdown emphasis
around it ignored), compared with each ``value`` within ``tolerance`` (absolute, default 1e-9).
"""

from __future__ import annotations

import difflib
import json
import math
import os
import re
import stat
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from harness.core._result import Result
from harness.core._terminations import FinishReason
from harness.errors import ToolError
from harness.grading._answer import final_answer
from harness.grading._base import GradeContext, Grader
from harness.grading._fields import field_error, relative_path_ok, yaml_text
from harness.grading._grade import Grade, show
from harness.tools._beneath import Beneath, read_fd

__all__ = [
    "ECHO_MIN_CHARS",
    "ContainsGrader",
    "EqualsGrader",
    "FileContainsGrader",
    "NumberGrader",
    "RegexGrader",
    "answer_number",
    "as_text",
    "copied_spans",
    "subject",
]

#: A stretch of the answer this long that the prompt also has counts as copied from the prompt.
ECHO_MIN_CHARS = 12
_VALUE_HELP = "the accepted string (or a list of them)"
_NUMBER = re.compile(r"[-+−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+]?\.\d+")


def subject(target: str | None, result: Result) -> tuple[Any, str]:
    """What a text grader looks at: (the deliverable or the final answer, its label)."""
    if target is None:
        submitted = result.finish_reason is FinishReason.SUBMITTED
        target = "deliverable" if submitted and result.deliverable is not None else "text"
    if target == "deliverable":
        return result.deliverable, "deliverable"
    return final_answer(result), "text"


def as_text(value: Any) -> str:
    if value is None or isinstance(value, str):
        return value or ""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def missing(label: str, result: Result) -> Grade:
    return Grade.of(False, f"no {label} (run ended with {result.finish_reason.value})")


def task_prompt(result: Result) -> str:
    """The run's first user message (the task's prompt)."""
    return next((m.content for m in result.messages if m.role == "user"), "") or ""


def copied_spans(text: str, prompt: str, min_chars: int = ECHO_MIN_CHARS) -> list[tuple[int, int]]:
    """The ``(start, end)`` stretches of ``text`` at least ``min_chars`` long that ``prompt``
    also has (case-insensitive), as difflib's matching blocks find them."""
    if not text or not prompt:
        return []
    matcher = difflib.SequenceMatcher(None, text.casefold(), prompt.casefold(), autojunk=False)
    return [(a, a + n) for a, _, n in matcher.get_matching_blocks() if n >= min_chars]


def _outside(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    return not any(s <= start and end <= e for s, e in spans)


class _Values(Grader):
    field_help: ClassVar[dict[str, str]] = {"value": _VALUE_HELP}

    value: list[str]
    case_sensitive: bool = False

    @field_validator("value", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        items = value if isinstance(value, list) else [value]
        return [yaml_text(v) for v in items]

    @model_validator(mode="after")
    def _some_values(self) -> _Values:
        if not self.value:
            raise field_error("value", "give at least one accepted string")
        for i, v in enumerate(self.value):
            self._check_value(f"value.{i}" if len(self.value) > 1 else "value", v)
        return self

    def _check_value(self, where: str, value: str) -> None:
        if value == "":
            raise field_error(where, "an empty string matches everything; give real text")

    def _fold(self, text: str) -> str:
        return text if self.case_sensitive else text.casefold()

    def _finds(self, text: str, value: str) -> list[tuple[int, int]]:
        hay, needle = self._fold(text), self._fold(value)
        out, at = [], hay.find(needle)
        while at >= 0:
            out.append((at, at + len(needle)))
            at = hay.find(needle, at + 1)
        return out

    def match(self, text: str, label: str, echoed: list[tuple[int, int]]) -> Grade:
        copied = False
        for v in self.value:
            found = self._finds(text, v)
            if any(_outside(echoed, s, e) for s, e in found):
                return Grade.of(True, f"found {show(v)} in {label}")
            copied = copied or bool(found)
        note = " (only inside text copied from the prompt)" if copied else ""
        return Grade.of(False, f"expected {_wanted(self.value)} in {label}{note}, got {show(text)}")


class _TextGrader(_Values):
    reads_answer: ClassVar[bool] = True

    target: Literal["deliverable", "text"] | None = None
    #: Why a match copied from the prompt still counts (default: it does not).
    allow_echo: str | None = Field(default=None, min_length=3)

    def evaluate(self, result: Result, context: GradeContext) -> Grade:
        value, label = subject(self.target, result)
        if value is None or value == "":
            return missing(label, result)
        text = as_text(value)
        echoed = [] if self.allow_echo else copied_spans(text, task_prompt(result))
        return self.match(text, label, echoed)


def _wanted(values: list[str]) -> str:
    shown = [show(v, 40) for v in values[:5]]
    more = f" (+{len(values) - 5} more)" if len(values) > 5 else ""
    return shown[0] if len(shown) == 1 else f"one of {', '.join(shown)}{more}"


class ContainsGrader(_TextGrader):
    """``contains``: one of ``value`` occurs in the answer (outside copied prompt text)."""

    kind: Literal["contains"] = "contains"


class EqualsGrader(_TextGrader):
    """``equals``: the stripped answer is one of ``value``."""

    kind: Literal["equals"] = "equals"

    def _check_value(self, where: str, value: str) -> None:
        pass

    def match(self, text: str, label: str, echoed: list[tuple[int, int]]) -> Grade:
        got = self._fold(text.strip())
        for v in self.value:
            if got == self._fold(v.strip()):
                return Grade.of(True, f"{label} equals {show(v)}")
        return Grade.of(False, f"expected {label} {_wanted(self.value)}, got {show(text.strip())}")


class RegexGrader(_TextGrader):
    """``regex``: :func:`re.search` of one of ``value`` (``re.IGNORECASE`` unless
    case-sensitive); anchors apply to the whole text (add ``(?m)`` for lines)."""

    kind: Literal["regex"] = "regex"

    def _check_value(self, where: str, value: str) -> None:
        try:
            re.compile(value)
        except re.error as exc:
            raise field_error(where, f"invalid regular expression {value!r}: {exc}") from None

    def _finds(self, text: str, value: str) -> list[tuple[int, int]]:
        flags = 0 if self.case_sensitive else re.IGNORECASE
        return [m.span() for m in re.finditer(value, text, flags)]

    def match(self, text: str, label: str, echoed: list[tuple[int, int]]) -> Grade:
        flags = 0 if self.case_sensitive else re.IGNORECASE
        for pattern in self.value:
            for found in re.finditer(pattern, text, flags):
                if _outside(echoed, *found.span()):
                    return Grade.of(True, f"/{pattern}/ matched {show(found.group(0), 40)}")
        return Grade.of(
            False, f"expected {label} matching /{'/ or /'.join(self.value)}/, got {show(text)}"
        )


def answer_number(text: str, echoed: list[tuple[int, int]] | None = None) -> float | None:
    """The answer's number: the first number in ``text`` (thousands commas allowed) that is not
    inside a stretch copied from the prompt (``echoed``), or None."""
    flat = text.replace("*", " ").replace("−", "-")  # same length: spans stay aligned
    for found in _NUMBER.finditer(flat):
        if echoed and not _outside(echoed, *found.span()):
            continue
        try:
            return float(found.group(0).replace(",", ""))
        except ValueError:
            return None
    return None


class NumberGrader(_TextGrader):
    """``number``: the answer's number (:func:`answer_number`) equals one of ``value`` within
    ``tolerance``."""

    kind: Literal["number"] = "number"
    tolerance: float = Field(default=1e-9, ge=0)

    def _check_value(self, where: str, value: str) -> None:
        try:
            float(value.replace(",", ""))
        except ValueError:
            raise field_error(where, f"{value!r} is not a number") from None

    def match(self, text: str, label: str, echoed: list[tuple[int, int]]) -> Grade:
        got = answer_number(text, echoed)
        if got is None:
            where = " outside text copied from the prompt" if echoed else ""
            return Grade.of(False, f"no number in {label}{where}: {show(text)}")
        for v in self.value:
            want = float(v.replace(",", ""))
            if math.isclose(got, want, rel_tol=0.0, abs_tol=self.tolerance):
                return Grade.of(True, f"{label}'s number is {got:g}")
        return Grade.of(False, f"expected {_wanted(self.value)}, {label}'s number is {got:g}")


class FileContainsGrader(_Values):
    """``file_contains``: one of ``value`` occurs in the workspace file ``path`` after the run."""

    kind: Literal["file_contains"] = "file_contains"
    reads_workspace: ClassVar[bool] = True
    field_help: ClassVar[dict[str, str]] = {
        "value": _VALUE_HELP,
        "path": "the file to check, relative to the workspace",
    }

    path: str

    @model_validator(mode="after")
    def _relative(self) -> FileContainsGrader:
        if not relative_path_ok(self.path):
            raise field_error("path", f"{self.path!r} must be a relative path inside the workspace")
        return self

    def evaluate(self, result: Result, context: GradeContext) -> Grade:
        rel = self.path
        if context.workspace is None:
            return Grade.of(False, f"no workspace to read {rel} from (the runner gave none)")
        root = os.path.realpath(context.workspace)
        # Looked up and opened beneath the workspace without following links out of it, and
        # never blocking on a FIFO a model left there (harness.tools._beneath).
        beneath = Beneath(root, (os.path.abspath(context.workspace),), rel)
        try:
            spot = beneath.spot(rel.split("/"))
        except ToolError:
            return Grade.of(False, f"refused: {rel!r} is outside the workspace")
        except (FileNotFoundError, NotADirectoryError):  # a folder on the way is missing
            return Grade.of(False, f"file {rel} was not found in the workspace after the run")
        try:
            if spot.lstat is None:
                return Grade.of(False, f"file {rel} was not found in the workspace after the run")
            if stat.S_ISDIR(spot.lstat.st_mode):
                return Grade.of(False, f"file {rel} is a directory in the workspace after the run")
            with beneath.opened(spot) as (fd, _):
                data = read_fd(fd, 4 * 1024 * 1024)
        except ToolError as exc:
            return Grade.of(False, f"file {rel}: {exc}")
        finally:
            spot.close()
        return self.match(data.decode("utf-8", errors="replace"), f"file {rel}", [])
