"""Text graders: ``equals``, ``contains``, ``regex``, ``number`` (the run's answer) and
``file_contains`` (a file in the workspace after the run).

``value`` is a string or a list of accepted strings (any one passing is enough); numbers in YAML
are read as their text (``value: 395`` is "395"). ``case_sensitive`` defaults to false.
``target`` picks the deliverable or the final text (default: the deliverable when the run was
submitted with one, else the final answer; a deliverable that is not a string is compared as
compact JSON).

The answer convention (docs/suites.md, "Short answers"): a short answer is read at the end of the
reply, as GSM8K-style graders and Inspect's ``match(location="end")`` read it.

- ``number`` reads the answer's **last** number (``1,234.5``, ``-3``, ``1e3``; Markdown emphasis
  ignored), compared with each ``value`` within ``tolerance``. With ``unit`` (the spellings the
  prompt's unit may take), a unit written with that number must be one of them (``3 dollars`` and
  ``$3`` pass, ``3 kilograms`` fails; a bare ``3`` passes: the prompt fixed the unit). With
  ``at: unit`` (an answer of several quantities) the number is the last one written with one of
  ``unit``.
- ``contains`` / ``regex`` with ``at: end``: the value must end the reply (trailing punctuation,
  quotes, brackets and Markdown emphasis aside), so "It is not X; the answer is Y" is Y.
- ``negated: true`` (``contains`` / ``regex``): a match counts only in a sentence that says the
  thing is not there (:data:`NEGATIONS`), for a trap's fact ("report.txt does not exist").

A reply that repeats the prompt is no answer (:func:`repeats_prompt`): when stretches it shares
with the prompt, compared on letters and digits only, cover half of the prompt or more, every
answer grader fails it. A correct short answer, which may quote a few words of the prompt ("The
change was denied."), never does.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Iterator
from typing import Any, ClassVar, Literal

import regex
from pydantic import Field, field_validator, model_validator

from harness.core._result import Result
from harness.core._terminations import FinishReason
from harness.errors import ToolError
from harness.grading._answer import final_answer
from harness.grading._base import GradeContext, Grader
from harness.grading._echo import ECHO_MIN_CHARS, repeats_prompt
from harness.grading._fields import field_error, name_problem, relative_path_ok, yaml_text
from harness.grading._grade import Grade, show
from harness.grading._patterns import REGEX_TIME_LIMIT_S, pattern_problem, searchable
from harness.grading._sentences import NEGATIONS, Reading, answer_end, unfolded_finds
from harness.tools._beneath import Beneath, read_fd

__all__ = [
    "ECHO_MIN_CHARS",
    "NEGATIONS",
    "UNITS",
    "ContainsGrader",
    "EqualsGrader",
    "FileContainsGrader",
    "NumberGrader",
    "RegexGrader",
    "answer_end",
    "answer_number",
    "as_text",
    "numbers",
    "repeats_prompt",
    "subject",
    "written_unit",
]

#: Units of measure and currencies a number may be written with (``unit`` checks these).
_UNIT_WORDS = """
$ usd dollar dollars € eur euro euros £ gbp sterling ¥ yen cent cents
kg kgs kilogram kilograms kilo kilos g gram grams mg milligram milligrams lb lbs pound pounds
oz ounce ounces ton tons tonne tonnes
km kilometre kilometres kilometer kilometers m metre metres meter meters cm centimetre
centimetres centimeter centimeters mm millimetre millimetres millimeter millimeters
mi mile miles ft foot feet inch inches yd yard yards
l litre litres liter liters ml millilitre millilitres milliliter milliliters gal gallon gallons
°c °f c f celsius fahrenheit kelvin degree degrees
sec secs second seconds min mins minute minutes h hr hrs hour hours day days week weeks
month months year years
"""
UNITS = frozenset(_UNIT_WORDS.split())
_VALUE_HELP = "the accepted string (or a list of them)"
_NUMBER = re.compile(
    r"(?<![\w.])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|(?<![\w.])[-+]?\.\d+"
)
_UNIT_AFTER = re.compile(r"\s*(°\s*[a-z]+|[a-z$€£¥]+\.?)", re.IGNORECASE)


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


class _Values(Grader):
    field_help: ClassVar[dict[str, str]] = {"value": _VALUE_HELP}
    #: A model's reply (or a file it wrote) may be megabytes: read on a worker thread, so a long
    #: read never holds up the event loop (the other cells, Ctrl-C).
    slow: ClassVar[bool] = True

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

    def _finds(self, text: str, value: str) -> Iterator[tuple[int, int]]:
        """Each match of ``value`` in ``text``, in order, as it is found (never all at once:
        a reply of a million matches is not a list of a million)."""
        hay, needle = self._fold(text), self._fold(value)
        if len(hay) != len(text):  # ß folds to ss: places in the folded text are further on
            yield from unfolded_finds(text, hay, needle)
            return
        at = hay.find(needle)
        while at >= 0:
            yield at, at + len(needle)
            at = hay.find(needle, at + 1)

    def _counts(self, reading: Reading, start: int, end: int) -> bool:
        return True

    def _where(self) -> str:
        return ""

    def match(self, text: str, label: str) -> Grade:
        found_any = False
        for v in self.value:
            reading = Reading(text)
            for s, e in self._finds(text, v):
                found_any = True
                if self._counts(reading, s, e):
                    return Grade.of(
                        True, f"found {show(v)} {self._where()}in {label}".replace("  ", " ")
                    )
        note = f" (found, but not {self._where().strip()})" if found_any else ""
        return Grade.of(False, f"expected {_wanted(self.value)} in {label}{note}, got {show(text)}")


class _TextGrader(_Values):
    reads_answer: ClassVar[bool] = True
    field_help: ClassVar[dict[str, str]] = {
        "value": _VALUE_HELP,
        "at": "anywhere (default), or end: the value must end the reply",
        "negated": "count a match only in a sentence saying it is not there",
    }

    target: Literal["deliverable", "text"] | None = None
    #: ``end``: the value must end the reply (the answer convention for short text answers).
    at: Literal["anywhere", "end"] = "anywhere"
    #: A match counts only in a sentence that says the thing is not there (:data:`NEGATIONS`).
    negated: bool = False

    def evaluate(self, result: Result, context: GradeContext) -> Grade:
        value, label = subject(self.target, result)
        if value is None or value == "":
            return missing(label, result)
        text = as_text(value)
        if label == "text" and repeats_prompt(text, task_prompt(result)):
            return Grade.of(False, f"the {label} repeats the prompt: {show(text)}")
        return self.match(text, label)

    def _counts(self, reading: Reading, start: int, end: int) -> bool:
        text = reading.text
        if self.at == "end" and end != reading.end:
            return False
        if self.at == "end" and start > 0 and text[start - 1].isalnum() and text[start].isalnum():
            return False  # "XNorland" does not end with the word Norland
        return not self.negated or reading.negated(start, end)

    def _where(self) -> str:
        parts = ["at the end"] if self.at == "end" else []
        parts += ["in a sentence saying it is not there"] if self.negated else []
        return " ".join(parts) + " " if parts else ""


def _wanted(values: list[str]) -> str:
    shown = [show(v, 40) for v in values[:5]]
    more = f" (+{len(values) - 5} more)" if len(values) > 5 else ""
    return shown[0] if len(shown) == 1 else f"one of {', '.join(shown)}{more}"


class ContainsGrader(_TextGrader):
    """``contains``: one of ``value`` occurs in the answer (with ``at: end``: ends it)."""

    kind: Literal["contains"] = "contains"


class EqualsGrader(_TextGrader):
    """``equals``: the stripped answer is one of ``value``."""

    kind: Literal["equals"] = "equals"

    def _check_value(self, where: str, value: str) -> None:
        pass

    def match(self, text: str, label: str) -> Grade:
        got = self._fold(text.strip())
        for v in self.value:
            if got == self._fold(v.strip()):
                return Grade.of(True, f"{label} equals {show(v)}")
        return Grade.of(False, f"expected {label} {_wanted(self.value)}, got {show(text.strip())}")


class RegexGrader(_TextGrader):
    """``regex``: a search (re's syntax) of one of ``value`` (case-insensitive unless
    case-sensitive); anchors apply to the whole text (add ``(?m)`` for lines); with ``at: end``
    a match must end the reply."""

    kind: Literal["regex"] = "regex"

    def _check_value(self, where: str, value: str) -> None:
        problem = pattern_problem(value)  # re's syntax (``regex`` V0 reads the same), and a
        if problem is not None:  # size ``regex`` can build (round 16 B: 2 GB at a first grading)
            raise field_error(where, problem)

    def _finds(self, text: str, value: str) -> Iterator[tuple[int, int]]:
        # ``regex`` (re's syntax, V0) with a time limit per search: stdlib re backtracked for
        # ever on the suite's ``(a|aa)+$`` over a reply of 46 ``a`` and ``!``, holding the GIL,
        # so neither the run's time limits nor a SIGTERM could stop it (round 14)
        flags = 0 if self.case_sensitive else regex.IGNORECASE
        found = regex.finditer(
            searchable(value), text, flags, timeout=REGEX_TIME_LIMIT_S, concurrent=True
        )
        return (m.span() for m in found)

    def _counts(self, reading: Reading, start: int, end: int) -> bool:
        if self.at == "end" and end != reading.end:
            return False
        return not self.negated or reading.negated(start, end)

    def match(self, text: str, label: str) -> Grade:
        for pattern in self.value:
            reading = Reading(text)
            try:
                for start, end in self._finds(text, pattern):
                    if self._counts(reading, start, end):
                        return Grade.of(True, f"/{pattern}/ matched {show(text[start:end], 40)}")
            except TimeoutError:
                return Grade(False, 0.0, f"regex /{pattern}/ took over {REGEX_TIME_LIMIT_S:g} s "
                             f"on the {label}: simplify the pattern", error=True)  # fmt: skip
        where = f" {self._where().strip()}" if self._where() else ""
        return Grade.of(
            False,
            f"expected {label} matching /{'/ or /'.join(self.value)}/{where}, got {show(text)}",
        )


def numbers(text: str) -> list[tuple[float, int, int]]:
    """Every number of ``text`` as (value, start, end): thousands commas allowed, a digit run
    inside a word (``B7``) is not a number, Markdown emphasis is ignored."""
    flat = text.replace("*", " ").replace("−", "-")  # same length: spans stay aligned
    out = []
    for found in _NUMBER.finditer(flat):
        try:
            out.append((float(found.group(0).replace(",", "")), *found.span()))
        except ValueError:
            continue
    return out


def answer_number(text: str) -> float | None:
    """The answer's number: the last number in ``text`` (the answer convention), or None."""
    found = numbers(text)
    return found[-1][0] if found else None


def written_unit(text: str, start: int, end: int) -> str | None:
    """The unit written with the number at ``text[start:end]`` (the word after it, or a
    currency sign before it), when it is one of :data:`UNITS`; else None."""
    k = start - 1  # the last character before it that is not whitespace
    while k >= 0 and text[k].isspace():  # (a copy of text[:start] per number was quadratic)
        k -= 1
    before = text[k] if k >= 0 else ""
    if before in {"$", "€", "£", "¥"}:
        return before
    after = _UNIT_AFTER.match(text, end)
    if after is None:
        return None
    word = re.sub(r"\s+", "", after.group(1)).rstrip(".").casefold()
    return word if word in UNITS else None


class NumberGrader(_TextGrader):
    """``number``: the answer's number equals one of ``value`` within ``tolerance``: its last
    number (:func:`answer_number`), whose unit, when one is written, must be one of ``unit``; with
    ``at: unit``, the last number written with one of ``unit``."""

    kind: Literal["number"] = "number"
    field_help: ClassVar[dict[str, str]] = {
        "value": "the accepted number (or a list of them)",
        "unit": "the spellings of the unit the prompt names (a number written with another "
        "unit fails)",
        "at": "end (default): the answer's last number; unit: the last written with `unit`",
    }
    tolerance: float = Field(default=1e-9, ge=0)
    unit: list[str] | None = None
    at: Literal["end", "unit"] = "end"  # type: ignore[assignment]

    @field_validator("unit", mode="before")
    @classmethod
    def _units(cls, value: Any) -> Any:
        if value is None:
            return None
        items = value if isinstance(value, list) else [value]
        return [yaml_text(v).casefold() for v in items]

    @model_validator(mode="after")
    def _unit_for_at(self) -> NumberGrader:
        if self.at == "unit" and not self.unit:
            raise field_error("at", "at: unit needs `unit` (the spellings to look for)")
        return self

    def _check_value(self, where: str, value: str) -> None:
        try:
            float(value.replace(",", ""))
        except ValueError:
            raise field_error(where, f"{value!r} is not a number") from None

    def match(self, text: str, label: str) -> Grade:
        found = numbers(text)
        accepted = set(self.unit or ())
        if self.at == "unit":
            found = [n for n in found if written_unit(text, n[1], n[2]) in accepted]
            if not found:
                return Grade.of(False, f"no number written in {self.unit[0]} in {label}: "  # type: ignore[index]
                                f"{show(text)}")  # fmt: skip
        if not found:
            return Grade.of(False, f"no number in {label}: {show(text)}")
        got, start, end = found[-1]
        unit = written_unit(text, start, end)
        if self.unit is not None and unit is not None and unit not in accepted:
            return Grade.of(
                False, f"{label}'s number {got:g} is in {unit}, expected {self.unit[0]}"
            )
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
        if problem := name_problem(self.path):  # (an error cell at each grading before)
            raise field_error("path", f"{show(self.path)} {problem}")
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
        return self.match(data.decode("utf-8", errors="replace"), f"file {rel}")
