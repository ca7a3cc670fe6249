"""Structured output: ``extract_structured(prompt, schema=...)`` with a repair loop.

The model is asked for one JSON object conforming to ``schema`` (a JSON Schema dict, or a pydantic
model class). The reply is parsed (the whole text, else a fenced ``json`` block) and validated
(``jsonschema``, or the pydantic model). On failure the error is sent back with the schema and the
model tries again, up to ``max_retries`` times (a ``StructuredRetry`` event each time); then the
run ends as ``error_max_structured_output_retries`` with the last error in ``error_diagnostic``.
On success ``Result.deliverable`` holds the value (a dict, or a model instance for a model class).

Each attempt is one iteration of the ordinary loop, so budget, hooks, events and ``Done`` behave
as in any run; calls are tagged ``structured``.
"""

from __future__ import annotations

import bisect
import heapq
import json
import re
from typing import Any

from harness._sync import in_thread
from harness.core._messages import Message
from harness.core._terminations import FinishReason
from harness.errors import ConfigError, ProviderError
from harness.events import StructuredRetry
from harness.kernel._calls import build_request, call_provider
from harness.kernel._replies import emit_text, handle_provider_error
from harness.kernel._state import Continue, Halt, State

__all__ = ["StructuredMode", "parse_json_reply"]

#: Where a fence may open: every ``` or ~~~ (overlapping: ```` has two).
_OPENS = re.compile(r"(?=```|~~~)")
_SPACE = re.compile(r"\s*+")
#: A run of whitespace right before a fence, from its first character: its line breaks are
#: where a fenced block may close.
_BEFORE_FENCE = re.compile(r"(?<!\s)\s++(?=```|~~~)")
_FENCES = ("```", "~~~")


def parse_json_reply(text: str) -> Any:
    """The JSON value in a reply: the whole text, else the first fenced block."""
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except (ValueError, RecursionError):
        pass
    block = first_fenced(text)
    if block is None:
        raise ValueError("the reply is not JSON and has no fenced ```json block")
    try:
        return json.loads(block)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"the fenced JSON block does not parse: {exc}") from None


def first_fenced(text: str) -> str | None:
    r"""The body of the first fenced block of ``text``: what
    ``re.search(r"(?:```|~~~)(?:json)?\s*\n(.*?)\n\s*(?:```|~~~)", text, re.DOTALL)`` gives
    as its group 1 (or None), in linear time. That pattern backtracked through every split of
    a run of blank lines after a fence, and again for each line break of the body: a reply of a
    fence and 4 KB of blank lines took 22 s holding the GIL (adversary round 20, part B).

    The pattern's own order of trial, kept here: the first opening fence that matches; after
    it ``json`` if present, then the longest whitespace ending in a line break (the body starts
    after it), the shortest body (the first line break whose next non-space text is a fence);
    when no fence closes after that, one line break less of the opening's whitespace, whose
    last line break then closes the block if a fence follows that whitespace."""
    closes = [
        i
        for run in _BEFORE_FENCE.finditer(text)
        for i in range(run.start(), run.end())
        if text[i] == "\n"
    ]
    for opened in _OPENS.finditer(text):
        start = opened.start() + 3
        if text.startswith("json", start):
            start += 4
        end = _SPACE.match(text, start).end()  # type: ignore[union-attr]
        last = text.rfind("\n", start, end)
        if last < 0:
            continue
        at = bisect.bisect_left(closes, last + 1)
        if at < len(closes):
            return text[last + 1 : closes[at]]
        previous = text.rfind("\n", start, last)
        if previous >= 0 and text.startswith(_FENCES, end):
            return text[previous + 1 : last]
    return None


class StructuredMode:
    """One attempt per iteration; Halt on success, exhaustion or a provider error."""

    name = "structured"
    #: One request, one value: follow-up user turns are refused.
    supports_turns = False

    def __init__(self, schema: Any, *, max_retries: int = 2, instructions: str | None = None):
        if max_retries < 0:
            raise ConfigError(f"max_retries: must be >= 0, got {max_retries}")
        self.max_retries = max_retries
        self.instructions = instructions
        self.model_cls: Any = None
        if isinstance(schema, type) and hasattr(schema, "model_json_schema"):
            self.model_cls = schema
            schema = schema.model_json_schema()
        if not isinstance(schema, dict):
            raise ConfigError("schema: pass a JSON Schema dict or a pydantic model class")
        import jsonschema
        import referencing

        try:
            cls = jsonschema.validators.validator_for(schema)
            cls.check_schema(schema)
        except jsonschema.SchemaError as exc:
            raise ConfigError(f"schema: not a valid JSON Schema: {exc.message}") from None
        self.schema = schema
        # No $ref fetched from outside the schema: jsonschema's default fetched a remote one
        # (http://, file:///) at every attempt, with urlopen and no timeout, on the event loop;
        # a server that never answered held the run for ever (adversary round 21, part A, as
        # round 20 B found for the json_schema grader). Unresolvable, as a dead link is.
        self._validator = cls(schema, registry=referencing.Registry())
        self.schema_text = json.dumps(schema, indent=2)

    def productivity_signal(self, prev: Any, state: State) -> bool:
        """Attempts are bounded by max_retries; a repeated bad reply is not 'no progress'."""
        return True

    def init(self, state: State) -> None:
        state.mode_state = {"attempt": 0}
        last = next(m for m in reversed(state.messages) if m.role == "user")
        parts = [self.instructions] if self.instructions else []
        parts.append(
            "Reply with one JSON object, and nothing else, that conforms to this JSON Schema:\n\n"
            f"{self.schema_text}"
        )
        last.content = "\n\n".join([*parts, last.content])

    async def iterate(self, state: State) -> Continue | Halt:
        ms = state.mode_state
        json_mode = state.capabilities.json_mode
        request = build_request(state, state.messages, purpose="structured", with_tools=False)
        if json_mode and request.response_format is None:
            request.response_format = {"type": "json_object"}
        try:
            response, streamed = await call_provider(state, request)
        except ProviderError as exc:
            return handle_provider_error(state, exc)
        if not streamed:
            emit_text(state, response, "structured")
        state.messages.append(Message.assistant(response.text, None, response.thinking))
        try:  # on a thread: a long reply, or a schema's patterns, take time (bounded)
            value = await in_thread(self._check, response.text, name="structured output check")
        except ValueError as exc:
            error = str(exc)
            if ms["attempt"] >= self.max_retries:
                state.error_diagnostic = {
                    "schema": self.schema,
                    "received": response.text,
                    "violations": [{"reason": error}],
                }
                return state.halt(FinishReason.ERROR_MAX_STRUCTURED_OUTPUT_RETRIES, error)
            ms["attempt"] += 1
            state.emit(StructuredRetry(ms["attempt"], error))
            state.messages.append(
                Message.user(
                    f"That reply failed validation: {error}\n\nReply again with only a JSON "
                    f"object that conforms to this schema:\n\n{self.schema_text}"
                )
            )
            return Continue()
        state.deliverable = value
        return state.halt(FinishReason.STOP)

    def _check(self, text: str) -> Any:
        value = parse_json_reply(text)
        if self.model_cls is not None:
            from pydantic import ValidationError

            try:
                return self.model_cls.model_validate(value)
            except ValidationError as exc:
                raise ValueError(_pydantic_problems(exc)) from None
        from harness.tools._schema_patterns import bounded  # (jsonschema: loaded here only)
        from harness.tools._timed_patterns import PATTERN_TIME_LIMIT_S

        # The first five by path, as sorted() would give them, without holding every error:
        # a reply of 300,000 wrong items (1.4 MB) held 1 GB of them (adversary round 21, A).
        # The schema's patterns searched by ``regex`` within a time limit: with jsonschema's
        # stdlib ``re``, ``^(a|aa)+$`` over 38 ``a`` and a ``!`` held the run's event loop 35 s
        # (adversary round 22, part A), as it held the json_schema grader (round 20, part B).
        try:
            errors = bounded(
                lambda: heapq.nsmallest(
                    5, self._validator.iter_errors(value), key=lambda e: list(e.path)
                ),
                PATTERN_TIME_LIMIT_S,
            )
        except TimeoutError:
            raise ValueError(
                f"the schema's patterns took over {PATTERN_TIME_LIMIT_S:g} s to check against "
                "this reply"
            ) from None
        if errors:
            raise ValueError(
                "; ".join(f"{'/'.join(map(str, e.path)) or '(root)'}: {e.message}" for e in errors)
            )
        return value


def _pydantic_problems(exc: Any) -> str:
    return "; ".join(
        f"{'/'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}"
        for e in exc.errors(include_url=False, include_context=False, include_input=False)[:5]
    )
