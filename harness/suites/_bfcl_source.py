"""The ``bfcl`` task source and the ``bfcl`` grader, registered through the extension seam like a
third party's (entry points ``harness.sources`` / ``harness.graders``, or these references:
``harness.suites._bfcl_source:bfcl_source`` and ``harness.suites._bfcl_source:BfclGrader``).

``bfcl:CATEGORY`` (or ``bfcl:CAT1,CAT2``; YAML ``source: {kind: bfcl, categories: [...],
ids: [...]}``) makes one task per scored entry (the few-shot entries are left out), with BFCL's
ids as task ids, tools built per run from BFCL's docs (multi-turn: BFCL's classes on fresh
instances), the ground truth as the mock script, and ``expect: {kind: bfcl, entry: ID}``.
A multi-turn entry is a conversation: one user turn per BFCL turn (a miss_func turn adds the
held-out tools with BFCL's "I have updated some more functions..." message), at most 20
tool-calling steps per turn as in BFCL's runner. Irrelevance tasks pass by making no call: they
carry an ``audit`` excuse. A task's system messages (live categories) become its system prompt.
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import logging
import re
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from pydantic import field_validator

from harness.core._result import Result
from harness.errors import ConfigError
from harness.grading import GRADERS, Grade, GradeContext, Grader
from harness.grading._bfcl_checker import grade_ast, grade_multi_turn
from harness.grading._bfcl_env import bfcl_version
from harness.suites._bfcl_data import (
    CATEGORIES,
    MISSED_FUNCTION_PROMPT,
    BfclEntry,
    category_of,
    entry,
    few_shot,
    ground_truth_calls,
    mock_script,
    scored_entries,
    shot_example,
)
from harness.suites._bfcl_tools import build_tools
from harness.suites._suite import Suite, Task

__all__ = [
    "AST_MAX_ITERATIONS",
    "LEADERBOARD_MAX_TOKENS",
    "MAX_STEPS_PER_TURN",
    "BfclGrader",
    "bfcl_source",
    "entry_task",
]

log = logging.getLogger("harness.suites")

#: BFCL's runner fails an entry past 20 steps in a turn.
MAX_STEPS_PER_TURN = 20
#: Model turns for a single-turn (AST, irrelevance) entry: the grade reads only the first
#: tool-calling reply, so a run needs a turn to call, one to answer, and a plan or critique.
AST_MAX_ITERATIONS = 5
#: The completion cap of BFCL's leaderboard for a model it serves itself: ``min(4096, the
#: context left)`` (bfcl_eval/model_handler/local_inference/base_oss_handler.py). A bare
#: ``bfcl:CATEGORY`` sends it with every request (a suite's ``defaults`` or the profile's
#: ``max_tokens`` decide in a YAML suite), so no request generates without end.
LEADERBOARD_MAX_TOKENS = 4096


#: A BFCL entry id: its category, then its number (``simple_python_0``, ``live_simple_106-63-0``).
_ENTRY_ID = re.compile(r"^[a-z][a-z0-9_]*_[0-9]+(?:-[0-9]+)*$")


class BfclGrader(Grader):
    """BFCL's own checker on the run's calls (``expect: {kind: bfcl, entry: ID}``)."""

    kind: Literal["bfcl"] = "bfcl"
    slow: ClassVar[bool] = True
    time_limit_s: ClassVar[float | None] = None  # its own: the checker worker's 60 s
    field_help: ClassVar[dict[str, str]] = {"entry": "the BFCL entry id, e.g. simple_python_0"}
    entry: str

    @field_validator("entry")
    @classmethod
    def _an_entry_id(cls, value: str) -> str:
        """An entry id of a known category, checked when the suite is validated (a path such
        as ``../../../etc/passwd`` passed ``suites validate`` and failed only when grading)."""
        if not _ENTRY_ID.fullmatch(value):  # match() took "simple_python_0\n" ($ before a \n)
            raise ValueError(f"{value!r} is not a BFCL entry id (CATEGORY_N, e.g. simple_python_0)")
        if category_of(value) not in CATEGORIES:
            raise ValueError(
                f"{value!r}: unknown BFCL category {category_of(value)!r}; the categories are: "
                f"{', '.join(CATEGORIES)}"
            )
        try:  # a well-formed id that BFCL's data lacks (simple_python_99999) fails here too
            entry(value)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        return value

    def evaluate(self, result: Result, context: GradeContext) -> Grade:
        e = entry(self.entry)
        if e.kind != "multi_turn":
            steps = [step for turn in result.turns for step in turn.steps if step]
            verdict = grade_ast(e.category, e.functions, e.ground_truth, steps[0] if steps else [])
        else:
            turns = [turn.steps for turn in result.turns]
            capped = any(t.finish_reason == "error_max_steps_per_turn" for t in result.turns)
            names = [f["name"] for f in e.all_functions()]
            verdict = grade_multi_turn(e.raw, names, e.ground_truth, turns, force_terminated=capped)
        return Grade.of(verdict.passed, verdict.explanation)


class _Catalog:
    """Task validation's tool catalog: the entry's own tools (made per run by its factory)."""

    def __init__(self, names: list[str]) -> None:
        self.names = frozenset(names)

    def resolve(self, name: str) -> None:
        if name not in self.names:
            raise ConfigError(f"unknown tool {name!r}: not one of the BFCL entry's functions")


def _text(messages: list[dict[str, Any]]) -> tuple[str, str | None]:
    """A BFCL turn's messages as (user text, system prompt or None)."""
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    rest = [m for m in messages if m["role"] != "system"]
    if len(rest) == 1:
        return rest[0]["content"], system or None
    lines = [m["content"] if m["role"] == "user" else f"({m['role']}) {m['content']}" for m in rest]
    return "\n\n".join(lines), system or None


@functools.cache
def _shots_cached(category: str) -> tuple[dict[str, Any], ...]:
    return tuple(shot_example(shot) for shot in few_shot(category))


def _shots(category: str) -> list[dict[str, Any]]:
    """The few-shot examples of ``category`` (a fresh list; none for categories without)."""
    return [dict(shot) for shot in _shots_cached(category)]


def entry_task(e: BfclEntry, *, few_shot: bool = True) -> Task:
    """The harness task of one BFCL entry (with its category's worked examples unless
    ``few_shot`` is false: zero-shot, as BFCL's leaderboard asks its models)."""
    first, system = _text(e.question[0])
    spec: dict[str, Any] = {
        "id": e.id,
        "tools": [d["name"].replace(".", "_") for d in e.functions],
        "expect": {"kind": "bfcl", "entry": e.id},
        "mock": {"turns": mock_script(e)},
        "tags": ["bfcl", e.category],
    }
    if system:
        spec["system_prompt"] = system
    if e.kind != "multi_turn":
        # Graded on the first tool-calling reply: a few turns to call, read the result, answer.
        spec["max_iterations"] = AST_MAX_ITERATIONS
    shots = _shots(e.category) if few_shot else []
    if shots:  # worked examples from entries left out of scoring (BFCL's leaderboard is 0-shot)
        spec["examples"] = shots
    if e.kind == "irrelevance":
        spec["audit"] = {"allow": True, "reason": "BFCL irrelevance: passes by making no call"}
    elif e.kind == "relevance":
        spec["audit"] = {"allow": True, "reason": "BFCL live_relevance: any call passes"}
    elif e.kind == "ast" and all(not c.arguments for c in ground_truth_calls(e)[0][0]):
        spec["audit"] = {"allow": True, "reason": "BFCL: the answer is a call without arguments"}
    if e.kind == "multi_turn":
        turns: list[Any] = [first]
        for i, messages in enumerate(e.question[1:], start=1):
            if i in e.missed:
                added = [d["name"] for d in e.missed[i]]
                turns.append({"user": MISSED_FUNCTION_PROMPT, "add_tools": added})
            else:
                turns.append(_text(messages)[0])
        spec["turns"] = turns
        spec["max_steps_per_turn"] = MAX_STEPS_PER_TURN
    else:
        spec["prompt"] = first
    names = [d["name"].replace(".", "_") for d in e.all_functions()]
    task = Task.model_validate(spec, context={"tools": _Catalog(names)})

    def tools() -> dict[str, Any]:
        toolset = build_tools(e)
        made = [*toolset.tools, *(t for added in toolset.added.values() for t in added)]
        return {t.name: t for t in made}

    task.with_tools(tools)
    return task


def _list(options: Mapping[str, Any], key: str) -> list[str]:
    value = options.get(key) or []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"bfcl source: `{key}` must be a list of strings")
    return value


def bfcl_source(argument: str | None, options: Mapping[str, Any]) -> Suite:
    """``bfcl:CATEGORY[,CATEGORY...]`` or YAML ``source: {kind: bfcl, categories, ids,
    few_shot}`` (``few_shot: false``: no worked examples, zero-shot)."""
    unknown = set(options) - {"categories", "ids", "few_shot"}
    if unknown:
        raise ConfigError(
            f"bfcl source: unknown option(s) {sorted(unknown)}; use categories, ids, few_shot"
        )
    few_shot = options.get("few_shot", True)
    if not isinstance(few_shot, bool):
        raise ConfigError(f"bfcl source: `few_shot` must be true or false, got {few_shot!r}")
    named = argument.split(",") if argument else _list(options, "categories")
    categories = list(dict.fromkeys(c.strip() for c in named))  # a repeat runs once
    for category in categories:
        if (n := sum(c.strip() == category for c in named)) > 1:
            log.warning("bfcl source: category %r named %d times; running it once", category, n)
    if not categories:
        raise ConfigError(f"bfcl source: name a category ({', '.join(CATEGORIES)})")
    ids = _list(options, "ids")
    if "bfcl" not in GRADERS:  # named by reference, without the entry points installed
        GRADERS.register("bfcl", BfclGrader)
    bfcl_version()  # a clear ConfigError, naming the install command, when it is missing
    chosen = [
        e
        for category in categories
        for e in scored_entries(category)
        if not ids or any(fnmatch.fnmatchcase(e.id, pattern) for pattern in ids)
    ]
    tasks = [entry_task(e, few_shot=few_shot) for e in chosen]
    if not tasks:
        raise ConfigError(f"bfcl source: no entry of {categories} matches ids {ids}")
    name = "bfcl-" + "-".join(categories) if argument else "bfcl"
    if len(name) > 80:  # a cassette folder name: keep it short and stable
        key = named if len(named) == len(categories) else categories  # as before repeats ran
        name = "bfcl-" + hashlib.sha1(",".join(key).encode()).hexdigest()[:10]
    known = _Catalog([d["name"].replace(".", "_") for e in chosen for d in e.all_functions()])
    suite = Suite.model_validate(
        {
            "suite": name.lower(),
            "description": f"BFCL (bfcl-eval {bfcl_version()}): {', '.join(categories)}",
            "tasks": tasks,
            # The bare form only: a YAML suite's own defaults would not override a task's.
            **({"defaults": {"max_tokens": LEADERBOARD_MAX_TOKENS}} if argument else {}),
        },
        context={"tools": known},
    )
    for made, task in zip(suite.tasks, tasks, strict=True):
        if made is not task:  # validation copied it: keep the per-run tool factory
            made._tool_factory = task._tool_factory
    return suite
