"""The ``judge`` grader: a model judges the run's answer against a rubric.

Fields: ``provider`` (a provider spec, ``NAME[:MODEL]``, as for ``--providers``), ``rubric`` (what
a good answer does), optionally ``transcript: true`` (the judge also sees the run's messages and
tool calls), ``provider_opts`` (e.g. ``{base_url: ...}``), ``response_format`` (sent with the
judge's request as the run option of that name: a JSON schema for the verdict, in the form the
judge's server takes) and ``timeout_s``.

The judge is one model call (a harness run with no tools, temperature 0, seed 0) asked for one
JSON object: ``{"passed": bool, "score": 0..1, "explanation": "..."}``; either of ``passed`` and
``score`` may be left out (``passed`` is then ``score >= 0.5``; ``score`` 1 or 0). A reply that
holds no such object, or a call that fails, gives no verdict: the cell is an ``error`` cell.

In ``harness run`` the judge's HTTP traffic goes through the cell's own cassette (for a cell on
the mock provider: ``cassettes/<suite>/mock/<mode>/<task>.e<epoch>.yaml``), so it is recorded and
replayed offline like the run's own calls; its cost is the grade's ``cost_usd`` and is stored as
``results.grading_cost_usd``, apart from the run's ``cost_usd``.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from harness._plugins import shown_value
from harness.core._result import Result
from harness.grading._answer import final_answer
from harness.grading._base import GradeContext, Grader
from harness.grading._fields import MAX_TIMEOUT_S, field_error
from harness.grading._grade import PASS_THRESHOLD, Grade

__all__ = ["JUDGE_SYSTEM_PROMPT", "JudgeGrader", "judge_prompt"]

JUDGE_SYSTEM_PROMPT = (
    "You are a strict, fair grader. Judge the ANSWER to the TASK against the RUBRIC. Reply with "
    'one JSON object and nothing else: {"passed": true or false, "score": a number from 0 to 1, '
    '"explanation": "one sentence"}.'
)
#: Characters of the transcript the judge sees (the end is kept).
TRANSCRIPT_CHARS = 12_000
DEFAULT_TIMEOUT_S = 120.0


class JudgeGrader(Grader):
    """``judge``: a model judges the run's answer against ``rubric``."""

    kind: Literal["judge"] = "judge"
    reads_answer: ClassVar[bool] = True
    records_calls: ClassVar[bool] = True
    time_limit_s: ClassVar[float | None] = None  # its own: timeout_s per model call
    field_help: ClassVar[dict[str, str]] = {
        "provider": "the judge's provider spec, e.g. 'openai:gpt-4o-mini'",
        "rubric": "what a good answer does",
    }

    provider: str
    rubric: str
    transcript: bool = False
    provider_opts: dict[str, Any] | None = None
    response_format: dict[str, Any] | None = None
    timeout_s: float | None = Field(default=None, gt=0, le=MAX_TIMEOUT_S)

    @model_validator(mode="after")
    def _fields(self) -> JudgeGrader:
        if not self.rubric.strip():
            raise field_error("rubric", "say what a good answer does")
        if self.provider_opts is not None and "transport" in self.provider_opts:
            raise field_error("provider_opts", "`transport` is set by the harness (the cassette)")
        from harness.providers._profiles import resolve_profile
        from harness.providers._registry import check_provider_opts

        try:
            resolve_profile(self.provider)
        except Exception as exc:
            raise field_error("provider", str(exc)) from None
        try:  # unknown keys passed `suites validate`, then every cell errored (round 14 B)
            check_provider_opts(self.provider, self.provider_opts or {})
        except Exception as exc:
            raise field_error("provider_opts", str(exc)) from None
        return self

    async def evaluate(self, result: Result, context: GradeContext) -> Grade:
        return await judge_grade(self, result, context.cassette)


def _transcript(result: Result) -> str:
    lines = []
    for m in result.messages:
        if m.role == "system":
            continue
        text = m.content if isinstance(m.content, str) else json.dumps(m.content, default=str)
        calls = [f"{c.name}({json.dumps(c.arguments, default=str)})" for c in m.tool_calls or []]
        if calls:
            text = f"{text}\n[calls] " + "; ".join(calls) if text else "[calls] " + "; ".join(calls)
        lines.append(f"{m.role}: {text}")
    flat = "\n".join(lines)
    return flat if len(flat) <= TRANSCRIPT_CHARS else "…" + flat[-TRANSCRIPT_CHARS:]


def judge_prompt(grader: JudgeGrader, result: Result) -> str:
    """The user message the judge gets."""
    task = next((m.content for m in result.messages if m.role == "user"), "")
    answer: Any = result.deliverable if result.deliverable is not None else final_answer(result)
    if not isinstance(answer, str):
        answer = json.dumps(answer, default=str)
    parts = [f"TASK:\n{task}", f"RUBRIC:\n{grader.rubric}", f"ANSWER:\n{answer or '(none)'}"]
    if grader.transcript:
        parts.append(f"TRANSCRIPT:\n{_transcript(result)}")
    return "\n\n".join(parts)


def _verdict(text: str) -> dict[str, Any] | None:
    """The verdict: the reply when it is JSON, else read from the objects of the text that are
    not inside another (:func:`_outermost`; in a code block or not): each object's own
    ``passed``/``score``, or the shallowest ones inside it (:func:`_judged`). Objects of one
    level that disagree give no verdict, and so does an object not inside another that does
    not parse but names ``passed`` or ``score`` (it may say otherwise). Innermost objects were
    read before outermost ones: ``{"passed": false, "criteria": {"tone": {"passed": true}}}``
    with a word before or after it was stored **passed** (adversary round 17, part A). A
    fenced object was read first, wherever it was (inside an outer verdict that does not parse
    too); of several top-level verdicts (a list of them, one per criterion in prose, an example
    before the verdict) the first was read; an example was read beside a verdict that did not
    parse: stored **passed** (adversary round 20, part A)."""
    try:
        return _judged(_parsed(text))
    except _Unreadable:
        return None
    except (ValueError, RecursionError):  # not JSON as a whole (prose, fences, ...)
        pass
    found: list[dict[str, Any]] = []
    for start, stop in _outermost(text):
        try:
            value = _parsed(text[start:stop])
        except (ValueError, RecursionError):  # nested past the parser, a trailing comma, ...
            if _NAMES_VERDICT.search(text, start, stop):
                return None  # an unreadable verdict: whatever else is read may contradict it
            continue
        try:
            verdict = _judged(value)
        except _Unreadable:
            return None
        if verdict is not None:
            found.append(verdict)
    return _agreed(found) if found else None


#: A key ``passed`` or ``score`` in an object's text (quoted as JSON or Python writes it).
_NAMES_VERDICT = re.compile(r"""(?i)["']?\b(?:passed|pass|score)\b["']?\s*:""")
_VERDICT_KEYS = ("passed", "score")


def _parsed(text: str) -> Any:
    """``json.loads(text)``, but an object giving ``passed`` or ``score`` twice, not the same,
    is a ``ValueError``: JSON's last one was read (``{"passed": false, ..., "passed": true}``
    stored **passed**; adversary round 21, part A)."""
    return json.loads(text, object_pairs_hook=_pairs)


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) < len(pairs):
        for name in _VERDICT_KEYS:
            given = [v for key, v in pairs if key == name]
            if any(v != given[0] for v in given):
                raise ValueError(f"{name} given twice")
    return value


class _Unreadable(Exception):
    """A verdict the grader cannot read (:func:`_misspelt`): no verdict, whatever else is
    read."""


def _misspelt(node: dict[Any, Any]) -> bool:
    """Whether ``node`` holds a verdict the grader cannot read: a key that reads as
    ``passed``, ``pass`` or ``score`` but is not spelt ``passed`` or ``score``
    (``"Passed"``, ``"PASS"``, ``"score "``). Such an overall verdict was passed over for a
    criterion's inside it: ``{"Passed": false, "criteria": {"a": {"passed": true}}}`` was
    stored **passed** (adversary round 21, part A)."""
    return any(
        isinstance(key, str)
        and len(key) <= 40
        and key not in _VERDICT_KEYS
        and _NOT_LETTERS.sub("", key.casefold()) in ("passed", "pass", "score")
        for key in node
    )


_NOT_LETTERS = re.compile(r"[\W\d_]+")


def _agreed(found: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The first of ``found`` (objects holding ``passed`` or ``score``) when all of them agree
    on both, else None."""
    first = found[0]
    try:
        same = all(
            (n.get("passed"), n.get("score")) == (first.get("passed"), first.get("score"))
            for n in found
        )
    except RecursionError:  # values nested past the comparison's depth
        same = False
    return first if same else None


def _judged(value: Any) -> dict[str, Any] | None:
    """The shallowest object holding ``passed`` or ``score`` in a parsed ``value`` (level by
    level, no recursion), or None (:class:`_Unreadable` for a verdict spelt otherwise at that
    level or above); None too when the objects of that level disagree: with
    per-criterion verdicts and no overall one (``{"accuracy": {"passed": true},
    "completeness": {"passed": false}}``) the first criterion was the verdict, stored
    **passed** (adversary round 19, part A)."""
    level = [value]
    while level:
        below: list[Any] = []
        found: list[dict[str, Any]] = []
        for node in level:
            if isinstance(node, dict):
                if _misspelt(node):
                    raise _Unreadable
                if "passed" in node or "score" in node:
                    found.append(node)
                else:
                    below.extend(node.values())
            elif isinstance(node, list):
                below.extend(node)
        if found:
            return _agreed(found)
        level = below
    return None


def _outermost(text: str) -> list[tuple[int, int]]:
    """The balanced ``{...}`` stretches of ``text`` that are not inside another, in order, as
    ``(start, stop)`` (one
    pass; quotes are read as JSON strings only inside braces, where a brace in a string does not
    count). An object that does not parse hides every object inside it: a failing verdict with
    per-criterion ones inside was read from an inner ``{"passed": true}`` (stored **passed**)
    when the outer one had a trailing comma, a number past the parser's digits, nesting past
    the recursion limit, or 10,000 stray ``{`` before it (round 17's search stopped there and
    fell back to innermost objects; adversary round 18, part A). A ``{`` never closed (a lone
    one in prose) hides nothing."""
    open_at: list[int] = []
    spans: list[tuple[int, int]] = []
    in_string, skip = False, -1
    for match in re.finditer(r'[{}"\\]', text):
        at, char = match.start(), match.group()
        if at == skip:
            continue
        if in_string:
            if char == "\\":
                skip = at + 1
            in_string = char != '"'
        elif char == '"':
            in_string = bool(open_at)
        elif char == "{":
            open_at.append(at)
        elif char == "}" and open_at:
            spans.append((open_at.pop(), at + 1))
    spans.sort()
    found: list[tuple[int, int]] = []
    end = -1
    for start, stop in spans:
        if start >= end:
            found.append((start, stop))
            end = stop
    return found


def _flag(value: Any) -> bool | None:
    """The verdict's ``passed``: a JSON boolean, or ``"true"`` / ``"false"`` as small models
    quote them; None when left out. ``bool()`` of it passed ``{"passed": "false"}`` with a score
    of 1.0 (adversary round 16, part A)."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ValueError(f"passed is {shown_value(value, 40)}, not true or false")


async def judge_grade(grader: JudgeGrader, result: Result, transport: Any = None) -> Grade:
    """Ask the judge; ``transport`` (the cell's cassette) carries its HTTP calls."""
    spec = grader.provider or ""
    opts = dict(grader.provider_opts or {})
    if transport is not None and not spec.startswith("mock"):
        opts["transport"] = transport
    timeout = grader.timeout_s or DEFAULT_TIMEOUT_S
    try:
        prompt = judge_prompt(grader, result)
        judged = await _ask(spec, prompt, opts, timeout, grader.response_format)
    except Exception as exc:
        return Grade(False, 0.0, f"judge {spec}: {type(exc).__name__}: {exc}", error=True)
    cost = judged.cost_usd or 0.0
    if not judged.success:
        why = judged.halted_reason or judged.finish_reason.value
        return Grade(False, 0.0, f"judge {spec} failed: {why}", error=True, cost_usd=cost)
    verdict = _verdict(judged.text or "")
    try:
        if verdict is None:
            raise ValueError("no JSON object with passed or score")
        score = verdict.get("score")
        passed = _flag(verdict.get("passed"))
        if score is None:
            score = 1.0 if passed else 0.0
        if isinstance(score, bool):
            raise ValueError(f"score {score!r} is not a number")
        score = float(score)
        if not 0.0 <= score <= 1.0:
            raise ValueError(f"score {score} is not in [0, 1]")
        passed = passed if passed is not None else score >= PASS_THRESHOLD
        why = str(verdict.get("explanation") or "no explanation")
    except (TypeError, ValueError) as exc:
        reply = " ".join((judged.text or "").split())[:120]
        return Grade(
            False, 0.0, f"judge {spec} gave no verdict ({exc}): {reply!r}", True, cost_usd=cost
        )
    return Grade(passed, score, f"judge {spec}: {why}", cost_usd=cost)


async def _ask(
    spec: str,
    prompt: str,
    opts: dict[str, Any],
    timeout_s: float,
    response_format: dict[str, Any] | None = None,
) -> Result:
    from harness.api import arun

    return await asyncio.wait_for(
        arun(
            prompt,
            provider=spec,
            system_prompt=JUDGE_SYSTEM_PROMPT,
            temperature=0.0,
            seed=0,
            provider_opts=opts,
            tools=None,  # the run default is every builtin: a judge only answers
            response_format=response_format,
            max_iterations=1,
        ),
        timeout=timeout_s,
    )
