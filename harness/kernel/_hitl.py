"""Human in the loop (Sagents' ``check_pre_tool_hitl``): pause a run before tool calls that need
approval, and continue it with the reviewer's decisions.

``interrupt_before=["write_file", "edit_*"]`` (names or ``fnmatch`` globs): when a model turn asks
for a matching call, no call of that turn runs (as in Sagents); the run ends as ``interrupted``
(category ``paused``) with ``Result.pending_tool_calls`` (the matching calls) and a resumable state.
``harness.resume(result, decisions={call_id: "approve" | "deny" | {"edit": {...}}})`` continues
the same run - same session, messages, counters, budget, provider and workspace: every pending
call needs a decision, the turn's other calls are approved implicitly, an edit replaces the
call's arguments (the transcript's assistant message shows the arguments that ran), a denied
call is not run and the model gets an error result saying so. Each decision is written at the
head of the call's result in the transcript (``[approved by the reviewer]``, ...).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
from collections.abc import Mapping, Sequence
from typing import Any

from harness.core._messages import ToolCall, ToolResult
from harness.core._terminations import FinishReason
from harness.errors import ConfigError
from harness.events import ToolCallEvent, ToolResultEvent
from harness.kernel._calls import MAX_ARGUMENT_DEPTH, _deeper_than
from harness.kernel._dispatch import dispatch
from harness.kernel._state import Continue, Halt, State
from harness.kernel._turns import close_turn

__all__ = ["apply_decisions", "interrupt", "needs_approval", "parse_decisions"]

DENIED = "[denied by the reviewer] the call was not run"


def needs_approval(state: State, calls: Sequence[ToolCall]) -> list[ToolCall]:
    """The calls that match ``interrupt_before``."""
    patterns = state.config.interrupt_before
    if not patterns:
        return []
    return [c for c in calls if any(fnmatch.fnmatchcase(c.name, p) for p in patterns)]


def interrupt(state: State, pending: list[ToolCall]) -> Halt:
    """End this part of the run as ``interrupted``, waiting for decisions on ``pending``."""
    state.pending_calls = pending
    names = ", ".join(f"{c.name} ({c.id})" for c in pending)
    return state.halt(FinishReason.INTERRUPTED, f"waiting for a decision on {names}")


def parse_decisions(
    pending: Sequence[ToolCall], decisions: Mapping[str, Any]
) -> dict[str, tuple[str, dict[str, Any] | None]]:
    """``{call_id: (approve | deny | edit, new arguments)}``; ConfigError naming the call when a
    decision is missing, unknown or malformed."""
    if not isinstance(decisions, Mapping):
        raise ConfigError(f"decisions: expected a mapping of call id to decision, got "
                          f"{type(decisions).__name__}")  # fmt: skip
    ids = [c.id for c in pending]
    unknown = [k for k in decisions if k not in ids]
    if unknown:
        raise ConfigError(f"decisions: no pending call {unknown[0]!r}; pending: {', '.join(ids)}")
    parsed: dict[str, tuple[str, dict[str, Any] | None]] = {}
    for call in pending:
        if call.id not in decisions:
            raise ConfigError(
                f"decisions: call {call.id!r} ({call.name}) needs a decision: "
                '"approve", "deny" or {"edit": {...arguments}}'
            )
        value = decisions[call.id]
        if value in ("approve", "deny"):
            parsed[call.id] = (value, None)
        elif (
            isinstance(value, Mapping)
            and set(value) == {"edit"}
            and isinstance(value["edit"], Mapping)
        ):
            parsed[call.id] = ("edit", _edited(call.id, value["edit"]))
        else:
            raise ConfigError(
                f'decisions[{call.id!r}]: expected "approve", "deny" or '
                f'{{"edit": {{...arguments}}}}, got {value!r}'
            )
    return parsed


def _edited(call_id: str, edit: Mapping[str, Any]) -> dict[str, Any]:
    """A reviewer's new arguments, checked as a model's are: JSON, at most
    :data:`~harness.kernel._calls.MAX_ARGUMENT_DEPTH` deep. A tuple key or arguments nested
    100,000 deep ended the resumed run as the harness's ``internal error`` (its traceback
    logged), the paused run spent (adversary round 21, part A)."""
    arguments = dict(edit)
    try:
        json.dumps(arguments)
    except (TypeError, ValueError, RecursionError) as exc:
        problem = f"not JSON ({type(exc).__name__}: {str(exc)[:200]})"
    else:
        if not _deeper_than(arguments, MAX_ARGUMENT_DEPTH):
            return arguments
        problem = f"nested more than {MAX_ARGUMENT_DEPTH} deep"
    raise ConfigError(f"decisions[{call_id!r}]: the edited arguments are {problem}")


async def apply_decisions(state: State, decisions: Mapping[str, Any]) -> Continue | Halt:
    """Run the interrupted turn's calls as the reviewer decided; the turn then closes like any
    ReAct turn (results, mistakes, halts, ``until_tool``)."""
    pending = state.pending_calls or []
    parsed = parse_decisions(pending, decisions)
    last = next(m for m in reversed(state.messages) if m.role == "assistant" and m.tool_calls)
    assert last.tool_calls is not None
    calls: list[ToolCall] = []
    for call in last.tool_calls:
        kind, args = parsed.get(call.id, ("auto", None))
        if kind == "edit" and args is not None:
            call = dataclasses.replace(call, arguments=args)
        calls.append(call)
    last.tool_calls = calls  # the transcript shows the arguments that ran
    state.pending_calls = None
    state.finish_reason = None
    state.halted_reason = None
    runnable = [c for c in calls if parsed.get(c.id, ("auto",))[0] != "deny"]
    outcome = await dispatch(state, runnable)
    by_id = {r.tool_call_id: r for r in outcome.results}
    results: list[ToolResult] = []
    for call in calls:
        kind = parsed.get(call.id, ("auto", None))[0]
        if kind == "deny":
            result = ToolResult(call.id, DENIED, True)
            state.emit(ToolCallEvent(call))
            state.emit(ToolResultEvent(call, result))
        elif call.id in by_id:
            result = by_id[call.id]
        else:  # not run: an earlier call halted the turn
            continue
        results.append(_annotated(result, kind, call))
    return close_turn(state, calls, results, outcome)


def _annotated(result: ToolResult, kind: str, call: ToolCall) -> ToolResult:
    if kind == "auto":
        return result
    if kind == "approve":
        head = "[approved by the reviewer]"
    elif kind == "edit":
        head = f"[arguments edited by the reviewer to {json.dumps(call.arguments, default=str)}]"
    else:  # denied: its result says so already
        return result
    return dataclasses.replace(result, content=f"{head}\n{result.content}")
