"""Conversations: follow-up user turns in one run (``turns=``, ``max_steps_per_turn``).

A run's first user turn is its prompt; each item of ``turns`` is a follow-up user message. Every
turn is processed by the mode until it answers in text (the mode halts with ``stop``); then the
next user message is appended and the loop goes on with the same state: messages, tool objects,
workspace, ``assigns``, budget and the run's ``max_iterations``. A follow-up turn may add tools
(``add_tools``), offered from that turn on. Any other ending (``submitted``, an error, a pause)
ends the run and the turns not reached are not played.

At the start of each follow-up turn the kernel fires ``UserPromptSubmit`` (payload ``prompt``,
``session_id``, ``turn``), resets the no-progress and mistake counters (a new request is a fresh
start) and calls the mode's optional ``on_user_turn(state)`` (sync or async), where a mode resets
its per-turn state. ``max_steps_per_turn`` caps the tool-calling steps (model replies with tool
calls) of one turn: a turn that goes past it ends the run as ``error_max_steps_per_turn`` (the
check runs before each iteration, so the cap's (N+1)-th step has run, as BFCL counts it).

The State's :class:`~harness.kernel._user_turns.TurnLog` keeps the per-turn records
(``Result.turns``): the user text, the tools added, the calls of each step as the model made
them, the reply. A conversation (a run with follow-up turns) frames each turn with
``TurnStarted`` / ``TurnEnded`` events; a single-turn run emits neither, so its events and trace
are unchanged.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from harness.core._messages import Message
from harness.core._terminations import FinishReason
from harness.errors import ConfigError
from harness.events import TurnEnded, TurnStarted
from harness.kernel._hooks import HookEvent
from harness.kernel._user_turns import PendingTurn
from harness.providers._base import ToolSpec

if TYPE_CHECKING:
    from harness.kernel._state import Mode, State
    from harness.tools._base import Tool

__all__ = [
    "end_turn",
    "fire_prompt_hook",
    "next_turn",
    "plan_turns",
    "record_steps",
    "reopen_turn",
]


def plan_turns(
    turns: Sequence[tuple[str, Sequence[Tool]]], tools: Mapping[str, Tool], mode: Mode
) -> list[PendingTurn]:
    """Check the follow-up turns against the run: the mode must take them (a mode with
    ``supports_turns = False`` refuses), and an added tool's name must be new to the run."""
    if not turns:
        return []
    if getattr(mode, "supports_turns", True) is False:
        raise ConfigError(
            f"turns: mode {mode.name!r} does not support follow-up user turns; use react, "
            "plan_and_solve or reflexion, or run each turn as its own run"
        )
    seen = set(tools)
    planned: list[PendingTurn] = []
    for i, (user, added) in enumerate(turns):
        for t in added:
            if t.name in seen:
                raise ConfigError(
                    f"turns[{i}].add_tools: tool {t.name!r} is already among the run's tools"
                )
            seen.add(t.name)
        planned.append(PendingTurn(user, tuple(added)))
    return planned


def record_steps(state: State, start: int) -> None:
    """Record the tool-calling replies among ``state.messages[start:]`` as steps of the current
    turn (called once per iteration, whatever its outcome)."""
    record = state.turn_log.current
    if record is None:
        return
    for m in state.messages[start:]:
        if m.role == "assistant" and m.tool_calls:
            record.steps.append([(c.name, copy.deepcopy(c.arguments)) for c in m.tool_calls])


def _reply(state: State) -> str | None:
    for m in reversed(state.messages):
        if m.role == "assistant":
            return m.content
    return None


def _close(state: State, reason: FinishReason) -> None:
    record = state.turn_log.current
    if record is None or record.finish_reason is not None:
        return
    record.finish_reason = reason
    record.reply = _reply(state) if reason is FinishReason.STOP else None
    if state.turn_log.conversation:
        state.emit(TurnEnded(record.index, record.reply, len(record.steps), reason))


def end_turn(state: State) -> None:
    """Close the current turn with the run's ending (once; before the result is built)."""
    _close(state, state.finish_reason or FinishReason.STOP)


def reopen_turn(state: State) -> None:
    """A paused turn goes on (``harness.resume``): clear its ending; a conversation starts the
    turn again in the new part's events (same index)."""
    record = state.turn_log.current
    if record is None:
        return
    record.finish_reason = None
    record.reply = None
    if state.turn_log.conversation:
        state.emit(TurnStarted(record.index, record.user, record.added_tools))


async def fire_prompt_hook(state: State, turn: int | None = None) -> None:
    """``UserPromptSubmit`` for the last user message: transform it, inject after it, or halt
    the run at the next check. ``turn`` goes in the payload for follow-up turns."""
    hooks = state.hooks
    if not hooks.has(HookEvent.USER_PROMPT_SUBMIT):
        return
    last_user = next((m for m in reversed(state.messages) if m.role == "user"), None)
    payload: dict[str, Any] = {
        "prompt": last_user.content if last_user else None,
        "session_id": state.session_id,
    }
    if turn is not None:
        payload["turn"] = turn
    out = await hooks.fire(HookEvent.USER_PROMPT_SUBMIT, payload)
    if out.transform is not None and last_user is not None:
        last_user.content = out.transform
    state.messages.extend(out.inject)
    if out.halt is not None and state.early_halt is None:
        state.early_halt = out.halt


async def next_turn(state: State) -> bool:
    """After the mode halted: when the run ended its turn with ``stop`` and a follow-up turn is
    waiting, start that turn and return True (the loop goes on); else False."""
    log = state.turn_log
    if not log.pending or (state.finish_reason or FinishReason.STOP) is not FinishReason.STOP:
        return False
    _close(state, FinishReason.STOP)
    turn = log.pending.pop(0)
    state.finish_reason = None
    state.halted_reason = None
    state.messages.append(Message.user(turn.user))
    if turn.tools:  # new objects: requests already made keep the tools they offered
        state.tools = {**state.tools, **{t.name: t for t in turn.tools}}
        state.tool_specs = [
            *state.tool_specs,
            *(ToolSpec(t.name, t.description, t.parameters) for t in turn.tools),
        ]
    state.unproductive_iterations = 0
    state.last_fingerprint = None
    state.consecutive_mistakes = 0
    record = log.start(turn.user, tuple(t.name for t in turn.tools))
    state.emit(TurnStarted(record.index, record.user, record.added_tools))
    await fire_prompt_hook(state, record.index)
    hook = getattr(state.mode, "on_user_turn", None)
    if hook is not None:
        try:
            out = hook(state)
            if inspect.isawaitable(out):
                await out
        except Exception as exc:
            state.halt(
                FinishReason.ERROR_DURING_EXECUTION, f"on_user_turn: {type(exc).__name__}: {exc}"
            )
            return False
    return True
