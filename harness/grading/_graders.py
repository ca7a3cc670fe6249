"""Graders: how a suite task's run is judged, and :func:`grade`, which judges it.

The :class:`Grader` fields by kind (anything else given is an error when the suite loads):

- ``equals`` / ``contains`` / ``regex``: ``value`` (a string or a list of accepted strings; any one
  passing is enough), optional ``target`` and ``case_sensitive``. ``equals`` compares stripped
  text; ``regex`` uses :func:`re.search` (anchors apply to the whole text; add ``(?m)`` for lines).
- ``file_contains``: ``path`` (relative to the run's workspace, read after the run) and ``value``
  (any one of them must occur in the file), optional ``case_sensitive``.
- ``json_schema``: ``schema`` (a JSON Schema, checked when the suite loads), optional ``target``.
  The deliverable is used as is when it is a mapping or list; otherwise the target text is parsed
  as JSON, either whole or from a fenced ```` ```json ```` block.
- ``finish_reason``: ``value`` (finish reason names such as ``error_no_progress``).
- ``python``: ``function`` (``"package.module:function"``, beside the suite file), called as
  ``fn(result, workspace)`` in a child process killed after ``timeout_s`` (default 30); see
  :mod:`harness.grading._python`. A grader that gives no verdict makes an ``error`` cell.
- ``command``: ``command`` run in the workspace in the shell tool's sandbox, passing on exit 0
  (:mod:`harness.grading._command`); ``judge``: ``provider`` and ``rubric``, a model's
  verdict (:mod:`harness.grading._judge`); ``all`` / ``any``: ``graders`` to combine.

``case_sensitive`` defaults to **false**: text is compared case-insensitively (``regex`` gets
``re.IGNORECASE``), since "Paris" and "paris" are the same answer; set it to true where case
matters. ``target`` defaults to the deliverable when the run was submitted with one, else the final
text; a deliverable that is not a string is compared as compact JSON. Numbers in ``value`` are read
as their YAML text (``value: 395`` is "395").

A grade is ``passed``, a ``score`` in [0, 1] and a one-line ``explanation`` (``expected '395' in
text, got '394'``). Grading never raises: a grader that cannot run says why.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from jsonschema.exceptions import SchemaError, best_match
from jsonschema.validators import validator_for
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    field_validator,
    model_validator,
)

from harness.core._result import Result
from harness.core._terminations import FinishReason
from harness.grading._answer import final_answer
from harness.grading._command import check_command_fields, command_grade
from harness.grading._fields import field_error, relative_path_ok, yaml_text
from harness.grading._judge import check_judge_fields, judge_grade

__all__ = [
    "GRADER_KINDS",
    "PASS_THRESHOLD",
    "TEXT_KINDS",
    "Grade",
    "Grader",
    "field_error",
    "final_answer",
    "grade",
    "relative_path_ok",
]

GraderKind = Literal[
    "equals", "contains", "regex", "json_schema", "file_contains", "finish_reason", "python",
    "tool_calls", "command", "judge", "all", "any",
]  # fmt: skip
GRADER_KINDS: tuple[str, ...] = get_args(GraderKind)
#: A python grader's float score passes at or above this.
PASS_THRESHOLD = 0.5

_FUNCTION_RE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
# kind -> (required fields, optional fields); every other grader field is refused.
_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "equals": (("value",), ("target", "case_sensitive")),
    "contains": (("value",), ("target", "case_sensitive")),
    "regex": (("value",), ("target", "case_sensitive")),
    "file_contains": (("path", "value"), ("case_sensitive",)),
    "json_schema": (("schema",), ("target",)),
    "finish_reason": (("value",), ()),
    "python": (("function",), ("timeout_s",)),
    "tool_calls": ((), ("value", "min")),
    "command": (("command",), ("timeout_s", "score_regex", "score_max")),
    "judge": (
        ("provider", "rubric"),
        ("transcript", "provider_opts", "response_format", "timeout_s"),
    ),
    "all": (("graders",), ()),
    "any": (("graders",), ()),
}
_WHAT = {
    "value": "the accepted string (or a list of them)",
    "path": "the file to check, relative to the workspace",
    "schema": "a JSON Schema mapping",
    "function": "'package.module:function'",
    "timeout_s": "seconds before the grader is stopped",
    "graders": "a list of graders to combine",
    "command": "the command to run in the workspace, e.g. 'python -m pytest -q'",
    "provider": "the judge's provider spec, e.g. 'openai:gpt-4o-mini'",
    "rubric": "what a good answer does",
}


class Grader(BaseModel):
    """How a task's run is judged (the ``expect:`` of a suite task); see :func:`grade`."""

    model_config = ConfigDict(extra="forbid", strict=True)

    kind: GraderKind
    value: list[str] | None = None
    path: str | None = None
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    function: str | None = None
    target: Literal["deliverable", "text"] | None = None
    case_sensitive: bool = False
    #: python / command graders: seconds before the grader (or command) is killed.
    timeout_s: float | None = Field(default=None, gt=0)
    #: ``command``: run in the sandboxed workspace; passes on exit 0; the score from the output.
    command: str | None = None
    score_regex: str | None = None
    score_max: float | None = Field(default=None, gt=0)
    #: ``judge``: its provider, rubric, provider options; does it see the transcript? The
    #: ``response_format`` its request carries (e.g. a JSON schema for the verdict).
    provider: str | None = None
    rubric: str | None = None
    transcript: bool = False
    provider_opts: dict[str, Any] | None = None
    response_format: dict[str, Any] | None = None
    #: ``tool_calls``: at least this many calls (default 1) of ``value`` (default: all but finish).
    min: int | None = Field(default=None, ge=1)
    #: ``all`` / ``any``: the graders combined.
    graders: list[Grader] | None = None
    _base_dir: Path | None = PrivateAttr(default=None)

    @property
    def base_dir(self) -> Path | None:
        """The folder python graders are imported from first (the suite file's folder)."""
        return self._base_dir

    def with_base_dir(self, folder: Path | None) -> None:
        """Import python graders (this one and any nested ones) from ``folder`` first."""
        self._base_dir = folder
        for value in self.__dict__.values():
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, Grader):
                    item.with_base_dir(folder)

    @field_validator("value", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        if value is None:
            return None
        items = value if isinstance(value, list) else [value]
        return [yaml_text(v) for v in items]

    @model_validator(mode="after")
    def _fields_for_kind(self) -> Grader:
        required, optional = _FIELDS[self.kind]
        given = {("schema" if f == "schema_" else f) for f in self.model_fields_set} - {"kind"}
        for name in required:
            if name not in given:
                raise field_error(name, f"{self.kind} needs `{name}`: {_WHAT[name]}")
        for name in sorted(given - set(required) - set(optional)):
            raise field_error(name, f"`{name}` is not used by {self.kind} graders; remove it")
        values = self.value or []
        if "value" in required and not values:
            raise field_error("value", "give at least one accepted string")
        if self.graders is not None and not self.graders:
            raise field_error("graders", f"{self.kind} needs at least one grader")
        for i, v in enumerate(values):
            where = f"value.{i}" if len(values) > 1 else "value"
            if self.kind in ("contains", "file_contains") and v == "":
                raise field_error(where, "an empty string matches everything; give real text")
            if self.kind == "regex":
                try:
                    re.compile(v)
                except re.error as exc:
                    raise field_error(where, f"invalid regular expression {v!r}: {exc}") from None
            if self.kind == "finish_reason" and v not in FinishReason.__members__.values():
                known = ", ".join(r.value for r in FinishReason)
                raise field_error(where, f"unknown finish reason {v!r}; use one of: {known}")
        if self.path is not None and not relative_path_ok(self.path):
            raise field_error("path", f"{self.path!r} must be a relative path inside the workspace")
        if self.schema_ is not None:
            try:
                validator_for(self.schema_).check_schema(self.schema_)
            except SchemaError as exc:
                at = "/".join(str(p) for p in exc.path)
                where = f" at {at}" if at else ""
                raise field_error(
                    "schema", f"not a valid JSON Schema{where}: {exc.message}"
                ) from None
        check_command_fields(self)
        check_judge_fields(self)
        if self.function is not None and not _FUNCTION_RE.match(self.function):
            raise field_error("function", f"{self.function!r} must look like 'package.module:name'")
        return self


@dataclass(frozen=True, slots=True)
class Grade:
    """The verdict on one run: passed, a score in [0, 1] and a one-line explanation."""

    passed: bool
    score: float
    explanation: str
    #: The grader itself failed (crashed, timed out, could not be imported): the cell cannot
    #: be scored, which is an ``error`` cell, not a failed one.
    error: bool = False
    #: What grading itself cost (LLM judges), USD: ``results.grading_cost_usd``.
    cost_usd: float = 0.0

    def __post_init__(self) -> None:
        if not (isinstance(self.score, int | float) and 0.0 <= self.score <= 1.0):
            raise ValueError(f"score must be a number in [0, 1], got {self.score!r}")
        object.__setattr__(self, "explanation", _one_line(self.explanation, 300))

    @classmethod
    def of(cls, passed: bool, explanation: str) -> Grade:
        return cls(passed, 1.0 if passed else 0.0, explanation)


#: Graders that read the run's answer (text or deliverable), not the workspace or the ending.
TEXT_KINDS = frozenset({"equals", "contains", "regex", "json_schema", "judge"})


def grade(
    grader: Grader,
    result: Result,
    workspace: Path | None = None,
    *,
    grade_on_error: bool = False,
    cassette: Any = None,
) -> Grade:
    """Judge ``result`` (and, for ``file_contains``, ``python`` and ``command``, the run's
    ``workspace`` directory after the run). Never raises. ``cassette``: the httpx transport
    that carries ``judge`` calls (the cell's cassette).

    Text graders read the run's answer: the deliverable of a submitted run, or the final
    assistant reply of a run that stopped. A run that ended any other way has no answer (a plan
    or a critique is never one), so text graders fail it, unless ``grade_on_error`` is set, in
    which case they read the last assistant text of the main conversation."""
    if grader.kind in ("all", "any"):
        parts = [
            grade(g, result, workspace, grade_on_error=grade_on_error, cassette=cassette)
            for g in grader.graders or []
        ]
        return _combine(grader.kind, parts)
    if grader.kind in TEXT_KINDS and not result.success and not grade_on_error:
        reason = result.finish_reason.value
        return Grade.of(
            False,
            f"no answer: the run ended with {reason} ({result.category.value}); text graders "
            "grade only runs that stop or submit (set grade_on_error: true to grade anyway)",
        )
    try:
        if grader.kind == "judge":
            verdict = judge_grade(grader, result, cassette)
        else:
            verdict = _KINDS[grader.kind](grader, result, workspace)
    except Exception as exc:  # a broken grader is an error cell; it never stops a matrix
        return Grade(
            False, 0.0, f"{grader.kind} grader error: {type(exc).__name__}: {exc}", error=True
        )
    reason = result.finish_reason.value
    if verdict.passed or verdict.error or result.success or reason in verdict.explanation:
        return verdict
    # Say how a failed run ended (e.g. it ran out of turns before answering).
    why = f"{verdict.explanation} (run ended with {reason})"
    return Grade(False, verdict.score, why, cost_usd=verdict.cost_usd)


def _one_line(text: str, limit: int = 60) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _show(text: str, limit: int = 60) -> str:
    """A short quoted excerpt (the end of a long text, where answers usually are)."""
    flat = " ".join(text.replace("\r", "").replace("\n", "\\n").split())
    if len(flat) > limit:
        flat = "…" + flat[-(limit - 1) :]
    return f"'{flat}'"


def _wanted(values: list[str]) -> str:
    shown = [_show(v, 40) for v in values[:5]]
    more = f" (+{len(values) - 5} more)" if len(values) > 5 else ""
    return shown[0] if len(shown) == 1 else f"one of {', '.join(shown)}{more}"


def _subject(grader: Grader, result: Result) -> tuple[Any, str]:
    """What a text grader looks at: (the deliverable or the final answer, its label)."""
    target = grader.target
    if target is None:
        submitted = result.finish_reason is FinishReason.SUBMITTED
        target = "deliverable" if submitted and result.deliverable is not None else "text"
    if target == "deliverable":
        return result.deliverable, "deliverable"
    return final_answer(result), "text"


def _as_text(value: Any) -> str:
    if value is None or isinstance(value, str):
        return value or ""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _missing(label: str, result: Result) -> Grade:
    return Grade.of(False, f"no {label} (run ended with {result.finish_reason.value})")


def _text_grade(grader: Grader, result: Result, _ws: Path | None) -> Grade:
    value, label = _subject(grader, result)
    if value is None or value == "":
        return _missing(label, result)
    return _match(grader, _as_text(value), label)


def _match(grader: Grader, text: str, label: str) -> Grade:
    values = grader.value or []
    fold = (lambda s: s) if grader.case_sensitive else str.casefold
    if grader.kind == "regex":
        flags = 0 if grader.case_sensitive else re.IGNORECASE
        for pattern in values:
            found = re.search(pattern, text, flags)
            if found:
                return Grade.of(True, f"/{pattern}/ matched {_show(found.group(0), 40)}")
        return Grade.of(False, f"expected {label} matching /{'/ or /'.join(values)}/, got "
                        f"{_show(text)}")  # fmt: skip
    if grader.kind == "equals":
        got = fold(text.strip())
        for v in values:
            if got == fold(v.strip()):
                return Grade.of(True, f"{label} equals {_show(v)}")
        return Grade.of(False, f"expected {label} {_wanted(values)}, got {_show(text.strip())}")
    for v in values:  # contains, file_contains
        if fold(v) in fold(text):
            return Grade.of(True, f"found {_show(v)} in {label}")
    return Grade.of(False, f"expected {_wanted(values)} in {label}, got {_show(text)}")


def _parse_json(text: str) -> tuple[Any, str | None]:
    """The JSON value of ``text`` (whole, or the first fenced block that parses) or an error."""
    try:
        return json.loads(text), None
    except ValueError as exc:
        first = str(exc)
    for block in re.findall(r"```[ \t]*(?:json)?[ \t]*\n(.*?)```", text, re.DOTALL | re.I):
        try:
            return json.loads(block), None
        except ValueError:
            continue
    return None, first


def _json_schema(grader: Grader, result: Result, _ws: Path | None) -> Grade:
    value, label = _subject(grader, result)
    if value is None or value == "":
        return _missing(label, result)
    if isinstance(value, dict | list):
        instance = value
    else:
        instance, error = _parse_json(_as_text(value))
        if error is not None:
            return Grade.of(False, f"{label} is not JSON ({error}): {_show(_as_text(value))}")
    schema = grader.schema_ or {}
    validator = validator_for(schema)(schema)
    violation = best_match(validator.iter_errors(instance))
    if violation is None:
        return Grade.of(True, f"{label} matches the schema")
    at = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in violation.path)
    return Grade.of(False, f"{label} violates the schema at {at}: {_one_line(violation.message)}")


def _file_contains(grader: Grader, result: Result, workspace: Path | None) -> Grade:
    rel = grader.path or ""
    if workspace is None:
        return Grade.of(False, f"no workspace to read {rel} from (the runner gave none)")
    root = Path(workspace).resolve()
    path = (root / rel).resolve()
    if not relative_path_ok(rel) or not path.is_relative_to(root):
        return Grade.of(False, f"refused: {rel!r} is outside the workspace")
    if not path.is_file():
        what = "is a directory" if path.is_dir() else "was not found"
        return Grade.of(False, f"file {rel} {what} in the workspace after the run")
    with path.open("rb") as f:
        data = f.read(4 * 1024 * 1024)
    return _match(grader, data.decode("utf-8", errors="replace"), f"file {rel}")


def _finish_reason(grader: Grader, result: Result, _ws: Path | None) -> Grade:
    got = result.finish_reason.value
    values = grader.value or []
    if got in values:
        return Grade.of(True, f"finish_reason {got}")
    want = values[0] if len(values) == 1 else f"one of {', '.join(values)}"
    return Grade.of(False, f"finish_reason {got}, expected {want}")


def _combine(kind: str, parts: list[Grade]) -> Grade:
    """``all``: every part passes; ``any``: one does. An errored part makes the whole an error
    unless ``any`` passed without it."""
    passed = all(p.passed for p in parts) if kind == "all" else any(p.passed for p in parts)
    errored = any(p.error for p in parts) and not (kind == "any" and passed)
    joined = "; ".join(p.explanation for p in parts)
    score = min(p.score for p in parts) if kind == "all" else max(p.score for p in parts)
    cost = sum(p.cost_usd for p in parts)
    score = score if passed or kind == "all" else 0.0
    return Grade(passed, score, f"{kind}: {joined}", errored, cost_usd=cost)


def _tool_calls(grader: Grader, result: Result, _ws: Path | None) -> Grade:
    names = set(grader.value or [])
    made = [
        call.name
        for m in result.messages
        if m.role == "assistant" and m.tool_calls
        for call in m.tool_calls
        if (call.name in names if names else call.name != "finish")
    ]
    need = grader.min or 1
    which = f" of {', '.join(sorted(names))}" if names else ""
    if len(made) >= need:
        return Grade.of(True, f"{len(made)} tool call(s){which}")
    return Grade.of(False, f"expected at least {need} tool call(s){which}, got {len(made)}")


def _python_grade(grader: Grader, result: Result, workspace: Path | None) -> Grade:
    """Run the grader in a child process with a timeout (see :mod:`harness.grading._python`):
    nothing it does (loop, exit, crash) reaches the harness; a grader that gives no verdict is
    an error (``Grade.error``)."""
    from harness.grading._python import run_python_grader

    function, base_dir, timeout_s = grader.function or "", grader.base_dir, grader.timeout_s
    return run_python_grader(function, result, workspace, base_dir=base_dir, timeout_s=timeout_s)


_KINDS: dict[str, Callable[[Grader, Result, Path | None], Grade]] = {
    "tool_calls": _tool_calls,
    "equals": _text_grade,
    "contains": _text_grade,
    "regex": _text_grade,
    "json_schema": _json_schema,
    "file_contains": _file_contains,
    "finish_reason": _finish_reason,
    "python": _python_grade,
    "command": lambda grader, _result, workspace: command_grade(grader, workspace),
}
