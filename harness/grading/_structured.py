"""Graders of structure rather than wording: ``json_schema`` (the answer validates against a
JSON Schema), ``finish_reason`` (how the run ended) and ``tool_calls`` (the calls the model made).

``json_schema``: ``schema`` (checked when the suite loads), optional ``target``. The deliverable
is used as is when it is a mapping or list; otherwise the target text is parsed as JSON, either
whole or from a fenced ```` ```json ```` block. ``finish_reason``: ``value`` (finish reason names
such as ``error_no_progress``). ``tool_calls``: at least ``min`` (default 1) calls of the tools
in ``value`` (default: any tool but ``finish``), counted from the model's own proposals (a
reviewer's edit never counts); with ``arguments`` (``{name: text}``) a call counts only when
each named argument holds that text (case-insensitive; a non-string argument as compact JSON).
"""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar, Literal

from jsonschema.exceptions import SchemaError, best_match
from jsonschema.validators import validator_for
from pydantic import Field, field_validator, model_validator

from harness.core._result import Result
from harness.core._terminations import FinishReason
from harness.grading import _patterns
from harness.grading._base import GradeContext, Grader
from harness.grading._fields import field_error, yaml_text
from harness.grading._grade import Grade, one_line, show
from harness.grading._schema_search import (
    NO_FETCH,
    bounded,
    depth,
    endless_problem,
    patterns_problem,
)
from harness.grading._text import as_text, missing, subject

__all__ = ["FinishReasonGrader", "JsonSchemaGrader", "ToolCallsGrader", "model_calls"]


def _listed(value: Any) -> Any:
    items = value if isinstance(value, list) else [value]
    return [yaml_text(v) for v in items]


class JsonSchemaGrader(Grader):
    """``json_schema``: the answer (or deliverable) validates against ``schema``."""

    kind: Literal["json_schema"] = "json_schema"
    reads_answer: ClassVar[bool] = True
    #: On a thread of its own: jsonschema's ``uniqueItems`` compares every pair of objects
    #: (8,000 in a reply took 72 s on the event loop, deaf to SIGTERM; adversary round 20 B).
    slow: ClassVar[bool] = True
    field_help: ClassVar[dict[str, str]] = {"schema": "a JSON Schema mapping"}

    schema_: dict[str, Any] = Field(alias="schema")
    target: Literal["deliverable", "text"] | None = None

    @model_validator(mode="after")
    def _valid_schema(self) -> JsonSchemaGrader:
        problem = patterns_problem(self.schema_)  # before jsonschema compiles them with re
        if problem is not None:
            raise field_error("schema", problem)
        try:
            validator_for(self.schema_).check_schema(self.schema_)
        except SchemaError as exc:
            at = "/".join(str(p) for p in exc.path)
            where = f" at {at}" if at else ""
            raise field_error("schema", f"not a valid JSON Schema{where}: {exc.message}") from None
        if problem := endless_problem(validator_for(self.schema_)(self.schema_, registry=NO_FETCH)):
            raise field_error("schema", problem)
        return self

    def evaluate(self, result: Result, context: GradeContext) -> Grade:
        value, label = subject(self.target, result)
        if value is None or value == "":
            return missing(label, result)
        if isinstance(value, dict | list):
            instance = value
        else:
            instance, error = parse_json(as_text(value))
            if error is not None:
                return Grade.of(False, f"{label} is not JSON ({error}): {show(as_text(value))}")
        validator = validator_for(self.schema_)(self.schema_, registry=NO_FETCH)
        try:
            violation = bounded(lambda: best_match(validator.iter_errors(instance)))
        except TimeoutError:
            return Grade(False, 0.0, f"json_schema grader error: the schema's patterns took "
                         f"over {_patterns.REGEX_TIME_LIMIT_S:g} s on the {label}: simplify "
                         "them", error=True)  # fmt: skip
        except RecursionError:  # a model's answer nested past what jsonschema can descend
            return Grade.of(False, f"{label} is nested {depth(instance)} levels deep: too deep "
                            "to check against the schema")  # fmt: skip
        if violation is None:
            return Grade.of(True, f"{label} matches the schema")
        at = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in violation.path)
        return Grade.of(
            False, f"{label} violates the schema at {at}: {one_line(violation.message)}"
        )


#: A fenced block. Possessive: ``[ \t]*(?:json)?[ \t]*`` tried every split of a run of blanks
#: between its two stars, quadratic: a fence and 20,000 spaces took 0.34 s, a megabyte about 14
#: minutes holding the GIL (adversary round 22, part A). What it finds is the same.
_FENCED_JSON = re.compile(r"```[ \t]*+(?:json)?+[ \t]*+\n(.*?)```", re.DOTALL | re.IGNORECASE)


def parse_json(text: str) -> tuple[Any, str | None]:
    """The JSON value of ``text`` (whole, or the first fenced block that parses) or an error."""
    try:
        return json.loads(text), None
    except ValueError as exc:
        first = str(exc)
    except RecursionError:  # an error cell, its fenced blocks never tried (round 21 B)
        first = "nested too deeply to read"
    for block in _FENCED_JSON.findall(text):
        try:
            return json.loads(block), None
        except (ValueError, RecursionError):
            continue
    return None, first


class FinishReasonGrader(Grader):
    """``finish_reason``: the run ended with one of ``value``."""

    kind: Literal["finish_reason"] = "finish_reason"
    field_help: ClassVar[dict[str, str]] = {"value": "finish reason names, e.g. error_max_turns"}

    value: list[str]

    _one_or_many = field_validator("value", mode="before")(_listed)

    @model_validator(mode="after")
    def _known(self) -> FinishReasonGrader:
        if not self.value:
            raise field_error("value", "give at least one accepted string")
        for i, v in enumerate(self.value):
            if v not in FinishReason.__members__.values():
                known = ", ".join(r.value for r in FinishReason)
                where = f"value.{i}" if len(self.value) > 1 else "value"
                raise field_error(where, f"unknown finish reason {v!r}; use one of: {known}")
        return self

    def names_ending(self, reason: str) -> bool:
        """Does this grader expect the run to end with ``reason``?"""
        return reason in self.value

    def evaluate(self, result: Result, context: GradeContext) -> Grade:
        got = result.finish_reason.value
        if got in self.value:
            return Grade.of(True, f"finish_reason {got}")
        want = self.value[0] if len(self.value) == 1 else f"one of {', '.join(self.value)}"
        return Grade.of(False, f"finish_reason {got}, expected {want}")


def model_calls(result: Result) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls the model itself proposed, in order, as (name, arguments), never a
    reviewer's edit: read from ``Result.turns`` (each step records the calls as the model made
    them, before a reviewer, a hook or a permission changed them); a Result without turn
    records (built by hand) falls back to the assistant messages' calls."""
    if result.turns:
        return [
            (name, dict(arguments))
            for turn in result.turns
            for step in turn.steps
            for name, arguments in step
        ]
    return [
        (call.name, dict(call.arguments))
        for m in result.messages
        if m.role == "assistant" and m.tool_calls
        for call in m.tool_calls
    ]


class ToolCallsGrader(Grader):
    """``tool_calls``: the model made at least ``min`` calls of the tools in ``value``."""

    kind: Literal["tool_calls"] = "tool_calls"

    value: list[str] | None = None
    min: int | None = Field(default=None, ge=1)
    arguments: dict[str, str] | None = Field(
        default=None,
        description="count only calls whose named arguments hold these texts "
        "(case-insensitive), as the model proposed them",
    )

    _one_or_many = field_validator("value", mode="before")(_listed)

    @field_validator("arguments", mode="before")
    @classmethod
    def _texts(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {str(k): yaml_text(v) for k, v in value.items()}
        return value

    def _holds(self, arguments: dict[str, Any]) -> bool:
        for key, want in (self.arguments or {}).items():
            if key not in arguments or want.casefold() not in as_text(arguments[key]).casefold():
                return False
        return True

    def evaluate(self, result: Result, context: GradeContext) -> Grade:
        names = set(self.value or [])
        made = [
            name
            for name, arguments in model_calls(result)
            if (name in names if names else name != "finish") and self._holds(arguments)
        ]
        need = self.min or 1
        which = f" of {', '.join(sorted(names))}" if names else ""
        if self.arguments:
            which += f" with {json.dumps(self.arguments, ensure_ascii=False)}"
        if len(made) >= need:
            return Grade.of(True, f"{len(made)} tool call(s){which}")
        return Grade.of(False, f"expected at least {need} tool call(s){which}, got {len(made)}")
