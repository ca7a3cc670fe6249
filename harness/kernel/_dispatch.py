"""Tool dispatch for one turn (port of ``ExAthena.Loop.Parallel``).

Serial calls (tools not marked ``parallel_safe``, and unknown tools) run first, in the model's
order; a halt stops the batch there. Parallel-safe calls then run concurrently, at most
``max_concurrency`` at once. Every call is bounded by ``tool_timeout_s``. Results come back in
call order. A denied, unknown, timed-out or raising call becomes an error result, never a crash;
except a :class:`~harness.errors.ToolSafetyNet` (a tool's own wall-clock safety net expired),
which ends the run as ``error_during_execution``: what the model sees never depends on load.
"""

from __future__ import annotations

import asyncio
import copy
import difflib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness._plugins import described
from harness.core._messages import INVALID_JSON_KEY, ToolCall, ToolResult, UIPayload
from harness.errors import ToolError, ToolSafetyNet
from harness.events import ToolCallEvent, ToolResultEvent, ToolUI
from harness.kernel._hooks import HaltRun, HookEvent
from harness.kernel._isolated import awaiting, own, owned, ran, unawaited
from harness.kernel._permissions import Denial
from harness.kernel._told import told
from harness.tools._base import Submit, ToolContext, ToolOutput, merge_assigns, render

if TYPE_CHECKING:
    from harness.kernel._state import State

__all__ = ["TurnOutcome", "as_sent", "dispatch"]


def as_sent(arguments: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of a call's arguments for code that may keep or change them (a tool, a
    permission callback, a hook): the call itself keeps the arguments as the model sent them."""
    return copy.deepcopy(arguments)


@dataclass(slots=True)
class TurnOutcome:
    """What one turn's tool calls produced. ``results`` is in call order, for the calls that ran
    to completion before any halt."""

    results: list[ToolResult] = field(default_factory=list)
    halted: str | None = None
    submitted: bool = False
    deliverable: Any = None


class _Stop(Exception):
    def __init__(self, result: ToolResult, halted: str | None, submit: Submit | None) -> None:
        self.result = result
        self.halted = halted
        self.submit = submit


async def dispatch(state: State, calls: Sequence[ToolCall]) -> TurnOutcome:
    outcome = TurnOutcome()
    tools = state.tools
    serial: list[ToolCall] = []
    parallel: list[ToolCall] = []
    for c in calls:
        (parallel if await _flag(tools.get(c.name), c.name, "parallel_safe") else serial).append(c)
    by_id: dict[int, ToolResult] = {}
    for call in serial:
        try:
            by_id[id(call)] = await _bounded(state, call, parallel=False)
        except _Stop as stop:
            return _stopped(outcome, stop, calls, by_id)
    if len(parallel) == 1:
        try:
            by_id[id(parallel[0])] = await _bounded(state, parallel[0], parallel=True)
        except _Stop as stop:
            return _stopped(outcome, stop, calls, by_id)
    elif parallel:
        limit = asyncio.Semaphore(state.config.max_concurrency)

        async def guarded(call: ToolCall) -> ToolResult:
            async with limit:
                return await _bounded(state, call, parallel=True)

        done = await asyncio.gather(*(guarded(c) for c in parallel), return_exceptions=True)
        first_stop: _Stop | None = None
        for call, value in zip(parallel, done, strict=True):
            if isinstance(value, _Stop):
                first_stop = first_stop or value
            elif isinstance(value, BaseException):
                raise value
            else:
                by_id[id(call)] = value
        if first_stop is not None:
            return _stopped(outcome, first_stop, calls, by_id)
    outcome.results = [by_id[id(c)] for c in calls]
    return outcome


def _stopped(
    outcome: TurnOutcome, stop: _Stop, calls: Sequence[ToolCall], by_id: dict[int, ToolResult]
) -> TurnOutcome:
    outcome.results = [by_id[id(c)] for c in calls if id(c) in by_id]
    outcome.halted = stop.halted
    if stop.submit is not None:
        outcome.submitted = True
        outcome.deliverable = stop.submit.deliverable
    return outcome


async def _bounded(state: State, call: ToolCall, *, parallel: bool) -> ToolResult:
    if state.subscribers:
        state.emit(ToolCallEvent(call, parallel))
    t0 = time.perf_counter()
    try:
        result = await _run_one(state, call)
    except _Stop as stop:
        state.emit(ToolResultEvent(call, stop.result, (time.perf_counter() - t0) * 1000.0))
        raise
    if state.subscribers:
        state.emit(ToolResultEvent(call, result, (time.perf_counter() - t0) * 1000.0))
        if result.ui is not None:
            state.emit(ToolUI(call.id, result.ui))
    return result


def _crash(exc: BaseException) -> str:
    """``RuntimeError: boom`` as the model has always been shown it; an exception whose message
    cannot be read is named by its type (:func:`~harness._plugins.described`)."""
    try:
        return f"{type(exc).__name__}: {exc}"
    except Exception:
        return described(exc)


async def _run_one(state: State, call: ToolCall) -> ToolResult:
    """Gate (permissions, PreToolUse), execute under the timeout, then PostToolUse. The
    timeout bounds the tool only: a slow approval callback is not a tool timeout.

    The tool, the permission callback and the hooks each get their own deep copy of the
    arguments (:func:`as_sent`), so ``call.arguments`` stays what the model sent: the transcript,
    ``Result.turns``, the spans and the graders never see what a tool later did to its arguments
    (BFCL's TwitterAPI, for one, keeps the list it is given and extends it on a later call)."""
    name = call.name
    tool = state.tools.get(name)
    refused = await _gate(state, call, tool)
    if refused is not None:
        return refused
    assert tool is not None
    ctx = state.ctx
    call_ctx = ToolContext(
        ctx.workspace, ctx.session_id, ctx.phase, call.id, ctx.assigns, ctx.kv, ctx.emit, ctx.spawn
    )
    timeout_s = state.config.tool_timeout_s
    clock = asyncio.timeout(timeout_s)
    try:
        async with clock:
            value = await awaiting(tool, tool.run(as_sent(call.arguments), call_ctx))
    except TimeoutError as exc:
        if not clock.expired():  # the tool's own TimeoutError: a crash, told to the model
            reason = f"tool crashed: {await told(exc, _crash)}"
            await _fire_failure(state, call, reason)
            result = ToolResult(call.id, f"error: {reason}", True)
        elif state.config.on_tool_timeout == "end_run":
            raise ToolSafetyNet(
                f"tool call '{name}' did not finish within {timeout_s:g} s (wall clock; "
                "on_tool_timeout='end_run'): an infrastructure error of the cell, not a result "
                "for the model"
            ) from None
        else:
            await _fire_failure(state, call, "timeout")
            result = ToolResult(
                call.id, f"error: tool call '{name}' timed out after {timeout_s:g}s", True
            )
    except ToolError as exc:
        await _fire_failure(state, call, str(exc))
        result = ToolResult(call.id, f"error: {exc}", True)
    except ToolSafetyNet:
        raise  # not the model's doing: the loop ends the run as error_during_execution
    except Exception as exc:
        reason = f"tool crashed: {await told(exc, _crash)}"
        await _fire_failure(state, call, reason)
        result = ToolResult(call.id, f"error: {reason}", True)
    else:
        result = await _taken(state, call, value)
    if state.hooks.has(HookEvent.POST_TOOL_USE):
        post = await state.hooks.fire(
            HookEvent.POST_TOOL_USE,
            {
                "tool_name": name,
                "arguments": as_sent(call.arguments),
                "result": result.content,
                "is_error": result.is_error,
                "cwd": str(ctx.workspace.root) if ctx.workspace.created else None,
                "assigns": ctx.assigns,
            },
            tool_name=name,
            tool_use_id=call.id,
        )
        if post.halt is not None:
            raise _Stop(result, post.halt, None)
        if post.augment:
            result = ToolResult(
                call.id,
                result.content + "\n\n" + "\n".join(post.augment),
                result.is_error,
                result.ui,
            )
    return result


async def _taken(state: State, call: ToolCall, value: Any) -> ToolResult:
    """The result of a tool's value (raises :class:`_Stop` for a ``Submit`` or ``HaltRun``).
    Its class is ``type(value)``, and its text (or a subclass's field) is read through
    :func:`~harness.kernel._isolated.ran`: ``isinstance`` reads a value's ``__class__``,
    ``render`` its ``__str__``, the plug-in's code run in the run's task: one cancelling that
    task left ``harness.run`` as ``CancelledError`` (adversary round 18, part A). Whatever
    reading it raises (a ``GeneratorExit`` too), or its cancel, is the tool's crash, told to
    the model."""
    kind = type(value)
    if issubclass(kind, ToolOutput):
        return await _output(state, call, value)
    read, got = await ran(_read, call, kind, value)
    if not read:
        reason = f"tool crashed: its result cannot be shown as text: {await told(got, _crash)}"
        await _fire_failure(state, call, reason)
        return ToolResult(call.id, f"error: {reason}", True)
    if isinstance(got, _Stop):
        raise got
    return ToolResult(call.id, got, False)


def _read(call: ToolCall, kind: type, value: Any) -> _Stop | str:
    """A tool's value read: a ``Submit`` or ``HaltRun`` as the stop it asks for, else its
    text (a coroutine the tool did not await: its ``repr`` told the model a memory address)."""
    if issubclass(kind, Submit):  # a subclass's deliverable read once, here
        plain = Submit(value.deliverable)
        return _Stop(ToolResult(call.id, "submitted", False), "submitted", plain)
    if issubclass(kind, HaltRun):
        why = render(value.reason)
        return _Stop(ToolResult(call.id, f"run halted: {why}", True), why, None)
    if unawaited(value):
        raise TypeError("it is a coroutine the tool did not await")
    return render(value)


async def _output(state: State, call: ToolCall, value: ToolOutput) -> ToolResult:
    """The result of a tool's ``ToolOutput``, its state updates merged into the run's
    ``assigns``: into a copy, so that a merge failing half-way (a cycle, nesting too deep for
    the merge, a mapping that raises) changes nothing and is the tool's crash, told to the
    model. It ended the run with the merge's ``RecursionError`` (adversary round 14, part A).
    Its fields are checked here, not only in ``ToolOutput.__post_init__``, which a subclass
    can replace: a subclass's ``content`` of ``None`` ended the run as an internal error, an
    ``int`` lost the cell, and a ``ui`` that is not a :class:`UIPayload` printed the tracer's
    traceback (adversary round 16, part A). Its fields are read in the run's task, through
    :func:`~harness.kernel._isolated.ran` (round 17, part A: they cancelled it)."""
    stages = ["its ToolOutput cannot be taken"]
    read, got = await ran(_fields, value, state.ctx.assigns, stages)
    if not read:
        stage = stages[0] if own(got) else stages[-1]
        reason = f"tool crashed: {stage}: {await told(got, _crash)}"
        await _fire_failure(state, call, reason)
        return ToolResult(call.id, f"error: {reason}", True)
    text, ui, merged = got
    if merged is not None:
        state.ctx.assigns.clear()
        state.ctx.assigns.update(merged)
    return ToolResult(call.id, text, False, ui)


def _fields(
    value: ToolOutput, assigns: dict[str, Any], stages: list[str]
) -> tuple[str, UIPayload | None, dict[str, Any] | None]:
    """A ``ToolOutput``'s text, ui and the run's ``assigns`` with its updates merged into a
    copy (None: no updates); ``stages`` gets the stage that failed last."""
    content, ui, updates = value.content, value.ui, value.assigns
    text = content if type(content) is str else render(content)
    if ui is not None and (type(ui) is not UIPayload or type(ui.kind) is not str):
        raise TypeError(f"its ui is a {type(ui).__name__}, not a UIPayload with a str kind")
    stages.append("its state updates cannot be merged")
    merged: dict[str, Any] | None = None
    if updates:
        merged = dict(assigns)
        merge_assigns(merged, updates)
    return text, ui, merged


async def _gate(state: State, call: ToolCall, tool: Any) -> ToolResult | None:
    """None when the call may run; else its error result (a denial, an unknown tool, bad JSON).
    Raises _Stop when a permission callback or PreToolUse hook halts the run."""
    name, args = call.name, call.arguments
    # A hook's matcher is tried on the run's own tool names only: a name the model made up
    # (200,000 characters, say) under a matcher such as ``mcp__.*__.*write`` held the event
    # loop 21 s in ``re`` (adversary round 17, part A). Hooks with no matcher still see it.
    matched = name if tool is not None else None
    read_only = await _flag(tool, name, "read_only")
    decision = await state.permissions.check(name, as_sent(args), read_only, state.ctx)
    if decision is None and state.hooks.has(HookEvent.PRE_TOOL_USE):
        pre = await state.hooks.fire(
            HookEvent.PRE_TOOL_USE,
            {
                "tool_name": name,
                "arguments": as_sent(args),
                "session_id": state.session_id,
                "assigns": state.ctx.assigns,
            },
            tool_name=matched,
            tool_use_id=call.id,
        )
        if pre.halt is not None:
            decision = HaltRun(pre.halt)
        elif pre.deny is not None:
            decision = Denial(f"permission denied: {pre.deny}", "user_denied")
    if isinstance(decision, HaltRun):
        raise _Stop(
            ToolResult(call.id, f"run halted: {decision.reason}", True), decision.reason, None
        )
    if decision is not None:
        await state.hooks.fire(
            HookEvent.PERMISSION_DENIED,
            {
                "tool_name": name,
                "arguments": as_sent(args),
                "reason": decision.reason,
                "code": decision.code,
            },
            tool_name=matched,
            tool_use_id=call.id,
        )
        return ToolResult(call.id, decision.reason, True)
    if INVALID_JSON_KEY in args:
        raw = str(args[INVALID_JSON_KEY])[:400]
        return ToolResult(
            call.id,
            f"error: tool arguments were not valid JSON: {raw!r}. "
            f"Re-send the {name} call with corrected JSON arguments.",
            True,
        )
    if tool is None:
        return ToolResult(call.id, _unknown_tool_message(name, state), True)
    return None


async def _flag(tool: Any, name: str, flag: str) -> bool:
    """A tool's ``parallel_safe`` or ``read_only`` (False for an unknown tool), read in a guard:
    a plug-in's property is its code, run in the run's task, which one cancelling that task
    left ``harness.run`` as ``CancelledError`` (adversary round 18, part A): the run ends
    naming it, as for a tool that breaks the run's safety net."""
    if tool is None or owned(tool):
        return bool(getattr(tool, flag, False))
    read, value = await ran(lambda: bool(getattr(tool, flag, False)))  # no awaitable: ran()
    if not read:
        crash = await told(value, _crash)
        raise ToolSafetyNet(f"tool {name!r}: its {flag} cannot be read: {crash}")
    return bool(value)


async def _fire_failure(state: State, call: ToolCall, reason: str) -> None:
    if state.hooks.has(HookEvent.POST_TOOL_USE_FAILURE):
        # Returns are ignored here, as in ExAthena (a failure hook cannot halt).
        await state.hooks.fire(
            HookEvent.POST_TOOL_USE_FAILURE,
            {"tool_name": call.name, "tool_use_id": call.id, "reason": reason},
            tool_name=call.name,
            tool_use_id=call.id,
        )


def _unknown_tool_message(name: str, state: State) -> str:
    available = sorted(state.tools)
    text = f"error: unknown tool: {name}."
    text += (
        f" Available tools: {', '.join(available)}." if available else " No tools are available."
    )
    close = difflib.get_close_matches(name, available, n=1, cutoff=0.75)
    if close:
        text += f' Did you mean "{close[0]}"?'
    return text
