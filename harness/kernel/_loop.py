"""The agent loop (port of ``ExAthena.Loop.run/2``).

Before every iteration, in this order: early halt -> max_iterations -> (max_steps_per_turn) ->
consecutive mistakes -> budget -> no progress; then proactive compaction, the ``Iteration``
event, the PreIteration hook and ``mode.iterate``. ``iterations`` counts continued iterations
only. Whatever happens after the loop has started - a raising hook, tool, subscriber or mode, a
cancelled task - the run ends with a Result, the Stop/StopFailure and SessionEnd hooks, and
exactly one final ``Done`` event. When the mode halts with ``stop`` and a follow-up user turn is
waiting, the loop goes on with that turn (:mod:`harness.kernel._conversation`).
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import inspect
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, cast

from harness._plugins import described, shown_value
from harness.core._result import Result, UsageTotals
from harness.core._terminations import FinishReason
from harness.errors import ContextOverflow, ThinkingStarved
from harness.events import Done, Iteration, RunWarning, Submitted, TurnStarted
from harness.kernel._compaction import CompactionError, compact, maybe_compact
from harness.kernel._conversation import (
    end_turn,
    fire_prompt_hook,
    next_turn,
    record_steps,
    reopen_turn,
)
from harness.kernel._hitl import apply_decisions
from harness.kernel._hooks import HookEvent
from harness.kernel._isolated import (
    awaiting,
    contained,
    own,
    ran,
    take_pending,
)
from harness.kernel._progress import (
    ProgressSnapshot,
    default_productivity_signal,
    fingerprint,
    last_assistant_text,
    strict_productivity_signal,
)
from harness.kernel._release import release
from harness.kernel._starvation import escalate
from harness.kernel._state import Continue, Halt, State
from harness.kernel._told import told

__all__ = ["CANCELLED_RESULTS", "release", "resume_loop", "run_loop"]

#: Where a run that a ``CancelledError`` ends (after its ``Done``) leaves its Result, for the
#: synchronous entry points, whose callers cannot have asked for that cancel (see
#: ``harness.api``); None (the default): nowhere.
CANCELLED_RESULTS: contextvars.ContextVar[list[Result] | None] = contextvars.ContextVar(
    "harness_cancelled_results", default=None
)

log = logging.getLogger("harness")


async def run_loop(state: State, *, owns_provider: bool = False) -> Result:
    """Drive a built state to its Result. Never raises for anything that happens in the run,
    except cancellation, which is re-raised after Done is emitted."""

    async def first_part() -> None:
        if await _start(state):
            await _loop(state)

    return await _drive(state, first_part, owns_provider)


async def resume_loop(state: State, decisions: Mapping[str, Any]) -> Result:
    """Continue an ``interrupted`` run with the reviewer's decisions (checked by the caller with
    :func:`~harness.kernel._hitl.parse_decisions`): the paused turn runs, then the loop goes on."""

    async def next_part() -> None:
        reopen_turn(state)
        before = len(state.messages)
        try:
            outcome = await apply_decisions(state, decisions)
        except BaseException as exc:  # an approved tool's GeneratorExit, as in the mode's turn
            if isinstance(exc, Exception) or _passes_through(exc, state):
                raise
            state.halt(FinishReason.ERROR_DURING_EXECUTION, await told(exc))
            return
        if isinstance(outcome, Continue):  # the reviewed turn is the paused iteration's end
            state.last_fingerprint = fingerprint(state.messages[before:])
            state.unproductive_iterations = 0
            state.iterations += 1
            await _loop(state)

    return await _drive(state, next_part, bool(state.meta.get("owns_provider", False)))


async def _drive(state: State, body: Callable[[], Awaitable[None]], owns_provider: bool) -> Result:
    import asyncio

    cancelled: BaseException | None = None
    state.driver = asyncio.current_task()
    try:
        await body()
    except BaseException as exc:
        if _passes_through(exc, state):
            cancelled = exc
            state.halt(FinishReason.ERROR_HALTED, f"cancelled: {type(exc).__name__}")
        else:
            log.exception("harness: internal error in run %s", state.session_id)
            state.halt(FinishReason.ERROR_DURING_EXECUTION, f"internal error: {described(exc)}")
    finally:
        if state.finish_reason is FinishReason.INTERRUPTED:  # kept for harness.resume
            state.meta["owns_provider"] = owns_provider
        else:
            await release(state, owns_provider)
    end_turn(state)
    result = to_result(state)
    await _finish(state, result)
    if cancelled is not None:
        box = CANCELLED_RESULTS.get()
        if box is not None:
            box.append(result)
        raise cancelled
    if state.meta.pop("own_cancel", False):  # an on_event subscriber's, still pending
        await take_pending(state.driver)
    return result


def _passes_through(exc: BaseException, state: State) -> bool:
    """What a mode's (or a tool's) code raises that ends more than its run: Ctrl-C,
    ``sys.exit``, a cancellation, the run's coroutine being closed (the caller decides: see
    :func:`_drive`; the bench runner makes such a cell an error cell). Anything else halts the
    run with ``error_during_execution``, a ``GeneratorExit`` the code raised itself too: seen
    while the run's own task runs, it was raised, not thrown in by ``close()`` (it used to end
    the bench's executor, and every cell after it)."""
    if isinstance(exc, GeneratorExit):
        import asyncio

        try:
            running = asyncio.current_task()
        except RuntimeError:  # closed from outside any event loop
            return True
        return state.driver is None or running is not state.driver
    return not contained(exc)


async def _start(state: State) -> bool:
    """The prompt and SessionStart hooks, then the mode's ``init(state)``; False when that
    raised (the run halted, as when ``iterate`` raises)."""
    hooks = state.hooks
    log = state.turn_log
    if log.conversation and log.current is not None:
        state.emit(TurnStarted(0, log.current.user))
    await fire_prompt_hook(state)
    if hooks.has(HookEvent.SESSION_START):
        out = await hooks.fire(HookEvent.SESSION_START, {"session_id": state.session_id})
        if out.halt is not None and state.early_halt is None:
            state.early_halt = out.halt
    # The mode primes its state last, as in ExAthena: hooks see the user's own prompt.
    try:
        done, init = await ran(_init, state)  # a plug-in's init runs in the run's task
        if not done:
            raise init
        if inspect.isawaitable(init):  # an async init(state) is allowed too
            await awaiting(state.mode, init)
    except BaseException as exc:
        if _passes_through(exc, state):
            raise
        name = getattr(state.mode, "name", type(state.mode).__name__)
        state.halt(
            FinishReason.ERROR_DURING_EXECUTION, f"mode {name!r}: init raised {await told(exc)}"
        )
        return False
    return True


async def _loop(state: State) -> None:
    mode = state.mode
    signal = getattr(mode, "productivity_signal", None)
    while True:
        if _limit_reached(state) or not await _prepare_iteration(state):
            return
        prev = ProgressSnapshot(
            len(state.messages),
            state.last_fingerprint,
            last_assistant_text(state.messages),
            state.iterations,
            state.tool_calls_made,
        )
        ran = await _run_mode(state, prev)
        if ran is None:
            return
        outcome, prev = ran
        if isinstance(outcome, Halt):
            if outcome.reason is not None and state.finish_reason is not outcome.reason:
                state.halt(outcome.reason)
            if await next_turn(state):  # the turn's answer; a follow-up turn is waiting
                continue
            return
        _count_iteration(state, prev, signal)


def _limit_reached(state: State) -> bool:
    """Checks 1-5, in ExAthena's order: True when one of them halted the run."""
    cfg = state.config
    if state.early_halt is not None:
        state.halt(FinishReason.ERROR_HALTED, state.early_halt)
        return True
    if state.iterations >= cfg.max_iterations:
        state.halt(FinishReason.ERROR_MAX_TURNS)
        return True
    cap = cfg.max_steps_per_turn
    if cap is not None and state.turn_log.steps_in_turn > cap:
        index = len(state.turn_log.records) - 1
        state.halt(
            FinishReason.ERROR_MAX_STEPS_PER_TURN,
            f"user turn {index} made more than {cap} tool-calling steps",
        )
        return True
    if state.consecutive_mistakes >= cfg.max_consecutive_mistakes:
        state.halt(FinishReason.ERROR_CONSECUTIVE_MISTAKES)
        return True
    if state.budget.exceeded(cfg.max_budget_usd):
        state.halt(FinishReason.ERROR_MAX_BUDGET_USD)
        return True
    limit = cfg.max_unproductive_iterations
    if limit > 0 and state.unproductive_iterations >= limit:
        state.no_progress_snapshot = state.messages[-(limit * 4) :]
        state.halt(FinishReason.ERROR_NO_PROGRESS)
        return True
    return False


async def _prepare_iteration(state: State) -> bool:
    """Step 6 up to the mode: compaction, the Iteration event, the PreIteration hook. False
    when the run halted on the way."""
    try:
        await maybe_compact(state)
    except CompactionError as exc:
        state.halt(FinishReason.ERROR_COMPACTION_FAILED, str(exc))
        return False
    state.emit(Iteration(state.iterations, state.unproductive_iterations))
    if state.hooks.has(HookEvent.PRE_ITERATION):
        out = await state.hooks.fire(
            HookEvent.PRE_ITERATION,
            {
                "iteration": state.iterations,
                "unproductive_iterations": state.unproductive_iterations,
                "fingerprint": state.last_fingerprint,
                "session_id": state.session_id,
                "assigns": state.ctx.assigns,
            },
        )
        if out.halt is not None:
            state.halt(FinishReason.ERROR_HALTED, out.halt)
            return False
        state.messages.extend(out.inject)
    return True


async def _run_mode(state: State, prev: ProgressSnapshot) -> tuple[object, ProgressSnapshot] | None:
    """``mode.iterate``, with its recoveries (compaction after a context overflow, escalation
    after a starved turn), and the turn's steps recorded. None when the mode raised (the run
    halted); else the outcome and the snapshot to measure progress against."""
    try:
        # cast: a user's mode may return anything; the loop checks it.
        outcome = cast(object, await awaiting(state.mode, state.mode.iterate(state)))
    except ContextOverflow as exc:
        outcome, base = await _recover(state, str(exc))
        # Compaction rewrote the history: the retried turn starts at the new length.
        prev = dataclasses.replace(prev, message_count=base)
    except ThinkingStarved as exc:
        outcome = await escalate(state, exc)
    except BaseException as exc:  # a plug-in's own BaseException subclass too, never a traceback
        if _passes_through(exc, state):
            raise
        record_steps(state, prev.message_count)
        if isinstance(exc, asyncio.CancelledError) and state.meta.pop("own_cancel", False):
            # An on_event subscriber's cancel of the run's task, pending until this await: it
            # ended the run as the mode's bare ``CancelledError`` (adversary round 17, part A).
            state.halt(FinishReason.ERROR_HALTED, "on_event cancelled the run's task")
            return None
        state.halt(FinishReason.ERROR_DURING_EXECUTION, await told(exc))
        return None
    record_steps(state, prev.message_count)
    taken = await _taken(state, outcome)
    return (taken, prev) if taken is not None else None


async def _taken(state: State, outcome: object) -> Halt | Continue | None:
    """The mode's answer as the loop reads it, or None when it is neither ``Continue()`` nor a
    ``Halt`` with a :class:`FinishReason` (the run halted, naming it). A plug-in's answer is
    read once, here, guarded: its ``__class__`` (asked by ``isinstance``), a ``Halt``
    subclass's ``reason`` or its ``repr`` are its code, run in the run's task: raising, they
    were the harness's "internal error" with a traceback; cancelling that task, they left
    ``harness.run`` as ``CancelledError``; and ``Halt("done")`` raised ``AttributeError`` out
    of ``harness.run`` (adversary round 18, part A)."""
    kind = type(outcome)
    if kind is Continue or (kind is Halt and _a_reason(cast(Halt, outcome).reason)):
        return cast(Halt | Continue, outcome)  # the built-in modes' answers: no plug-in code
    read, got = await ran(_read, kind, outcome)  # a GeneratorExit too (round 19, part A)
    if own(got):
        taken, why = None, f"a {kind.__name__} that, read, cancelled its run's task"
    elif not read:
        taken, why = None, f"a {kind.__name__} that cannot be read ({await told(got)})"
    else:
        taken, why = got
    if taken is None:
        name = getattr(state.mode, "name", type(state.mode).__name__)
        state.halt(
            FinishReason.ERROR_DURING_EXECUTION,
            f"mode {name!r} returned {why}; expected Continue() or Halt()",
        )
    return taken


def _read(kind: type, outcome: object) -> tuple[Halt | Continue | None, str]:
    """A mode's answer as the loop takes it (None: neither ``Continue()`` nor a ``Halt`` with
    a :class:`FinishReason`), and what it is, for the message naming it."""
    if issubclass(kind, Halt):
        reason = cast(Halt, outcome).reason
        why = f"a Halt whose reason is {shown_value(reason, 80)}, not a FinishReason"
        return (Halt(reason) if _a_reason(reason) else None), why
    return (Continue() if issubclass(kind, Continue) else None), shown_value(outcome)


def _init(state: State) -> Any:
    return state.mode.init(state)


def _a_reason(reason: object) -> bool:
    return reason is None or type(reason) is FinishReason


def _count_iteration(
    state: State, prev: ProgressSnapshot, signal: Callable[[ProgressSnapshot, State], object] | None
) -> None:
    """Progress tracking (the check the run asked for, else the mode's own signal), then count
    the iteration."""
    current = fingerprint(state.messages[prev.message_count :])
    state.fingerprint = current
    new = state.messages[prev.message_count :]
    check = state.config.progress_check
    if check == "strict":
        productive = strict_productivity_signal(prev, new, current)
    elif check == "lax":
        productive = default_productivity_signal(prev, new, current)
    elif signal is not None:
        productive = bool(signal(prev, state))
    else:
        productive = default_productivity_signal(prev, new, current)
    state.unproductive_iterations = 0 if productive else state.unproductive_iterations + 1
    state.last_fingerprint = current
    state.iterations += 1


async def _recover(state: State, reason: str) -> tuple[Continue | Halt, int]:
    """Reactive recovery: one forced compaction and one retry, else error_prompt_too_long.
    Returns the outcome and the message count the retried turn started from."""
    if not state.config.reactive_compact:
        return state.halt(FinishReason.ERROR_PROMPT_TOO_LONG, reason), len(state.messages)
    try:
        await compact(state, reason="reactive_recovery")
    except CompactionError as exc:
        halt = state.halt(FinishReason.ERROR_PROMPT_TOO_LONG, f"compaction failed: {exc}")
        return halt, len(state.messages)
    base = len(state.messages)
    try:
        return await awaiting(state.mode, state.mode.iterate(state)), base
    except Exception as exc:
        halt = state.halt(
            FinishReason.ERROR_PROMPT_TOO_LONG,
            f"still too long after compaction: {type(exc).__name__}: {exc}",
        )
        return halt, base


def to_result(state: State) -> Result:
    reason = state.finish_reason or FinishReason.STOP
    paused = reason is FinishReason.INTERRUPTED and state.pending_calls is not None
    text = None
    for m in reversed(state.messages):
        if m.role == "assistant" and m.content.strip():
            text = m.content
            break
    budget = state.budget
    return Result.model_construct(
        finish_reason=reason,
        category=reason.category,
        text=text,
        deliverable=state.deliverable,
        messages=state.messages,
        iterations=state.iterations,
        tool_calls_made=state.tool_calls_made,
        llm_calls=len(budget.calls),
        usage=UsageTotals.of(budget.usage),
        cost_usd=budget.cost_usd,
        duration_ms=(time.perf_counter() - state.started_at) * 1000.0,
        model=state.model,
        provider=state.provider_name,
        mode=state.mode_name,
        session_id=state.session_id,
        halted_reason=None if reason is FinishReason.SUBMITTED else state.halted_reason,
        error_diagnostic=state.error_diagnostic,
        no_progress_snapshot=state.no_progress_snapshot,
        turns=state.turn_log.frozen(),
        trace_id=None,
        calls=budget.calls,
        assigns=state.ctx.assigns,
        pending_tool_calls=list(state.pending_calls or ()) if paused else None,
        resume_state=state if paused else None,
    )


async def _finish(state: State, result: Result) -> None:
    hooks = state.hooks
    if hooks and result.finish_reason is not FinishReason.INTERRUPTED:  # the session goes on
        payload = {
            "session_id": state.session_id,
            "finish_reason": result.finish_reason.value,
            "result": result,
        }
        event = HookEvent.STOP if result.success else HookEvent.STOP_FAILURE
        for hook in (event, HookEvent.SESSION_END):
            out = await hooks.fire(hook, payload)
            if out.halt is not None:  # too late to halt: say so, keep going
                state.emit(RunWarning(f"{hook.value} hook: {out.halt}", "hooks"))
    if result.finish_reason is FinishReason.SUBMITTED:
        state.emit(Submitted(result.deliverable))
    state.emit(Done(result))
