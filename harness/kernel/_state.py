"""What a mode is written against: the run's :class:`State`, the :class:`Mode` protocol that
drives it, and the :class:`Continue` / :class:`Halt` an iteration returns. They refer to each
other (a State holds its Mode, a Mode's methods take the State, ``State.halt`` returns a Halt),
so they live together.

A mode implements ``init(state)`` (once, before the first iteration) and
``async iterate(state) -> Continue | Halt``; optionally
``productivity_signal(prev: ProgressSnapshot, state) -> bool`` replaces the kernel's default
no-progress check. A mode ends the run by returning :class:`Halt` with the reason:
``return state.halt(FinishReason.STOP)`` records the reason (and an optional detail) on the state
and returns ``Halt(FinishReason.STOP)``. A bare ``Halt()`` ends the run with
``state.finish_reason`` (``stop`` when unset). Raising :class:`~harness.errors.ContextOverflow`
asks the kernel for reactive compaction and one retry; any other exception ends the run as
``error_during_execution``.

Conversations (``turns=``): each user turn runs until the mode halts with ``stop``; then the
kernel appends the next user message and calls the mode's optional ``on_user_turn(state)``
(sync or async) to reset per-turn state; iterate goes on as before. A mode that cannot take
follow-up turns sets the class attribute ``supports_turns = False`` (the run is refused with
ConfigError).

Per-run data belongs in ``state.mode_state``, so one mode object can serve many runs. The protocol
lives in the kernel, which drives it; the builtin modes (:mod:`harness.modes`) sit above it.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from harness.core._budget import Budget
from harness.core._messages import Message, ToolCall
from harness.core._terminations import FinishReason
from harness.errors import ContextOverflow
from harness.events import Event
from harness.kernel._hooks import Hooks
from harness.kernel._permissions import Permissions
from harness.kernel._progress import Fingerprint
from harness.kernel._user_turns import TurnLog
from harness.providers._base import Capabilities

if TYPE_CHECKING:
    from harness.kernel._options import RunConfig
    from harness.providers._base import Provider, ToolSpec
    from harness.tools._base import Tool, ToolContext

__all__ = ["ChildFactory", "ContextOverflow", "Continue", "Halt", "Mode", "State", "Subscriber"]


@dataclass(slots=True, frozen=True)
class Continue:
    """Keep looping (the kernel checks its caps before the next iteration)."""


@dataclass(slots=True, frozen=True)
class Halt:
    """Stop: the run ends with ``reason``; without one, with ``state.finish_reason`` (``stop`` when
    unset)."""

    reason: FinishReason | None = None


@runtime_checkable
class Mode(Protocol):
    name: str

    def init(self, state: State) -> Awaitable[None] | None: ...

    async def iterate(self, state: State) -> Continue | Halt: ...


Subscriber = Callable[[Event], None]

#: Builds a sub-agent's State from its parent, its prompt and run-option overrides; returns the
#: state and whether the child owns (must close) its provider. Installed by the facade.
ChildFactory = Callable[["State", str, dict[str, Any]], tuple["State", bool]]


@dataclass(slots=True, eq=False)
class State:
    """Everything a run knows. Modes read and update it; the kernel checks it between iterations.

    ``mode_state`` is the mode's private slot. A mode ends the run by setting ``finish_reason``
    (and ``halted_reason`` / ``error_diagnostic`` where useful) and returning ``Halt``.
    """

    config: RunConfig
    provider: Provider
    mode: Mode
    tools: dict[str, Tool]
    tool_specs: list[ToolSpec]
    hooks: Hooks
    permissions: Permissions
    ctx: ToolContext
    session_id: str
    model: str | None = None
    #: The provider's and the mode's names and the provider's capabilities, read once as the
    #: run is made (:func:`~harness.kernel._setup.new_state`): a plug-in's are its code.
    provider_name: str = ""
    mode_name: str = ""
    capabilities: Capabilities = field(default_factory=Capabilities)
    messages: list[Message] = field(default_factory=list)
    subscribers: Sequence[Subscriber] = ()
    budget: Budget = field(default_factory=Budget)
    iterations: int = 0
    tool_calls_made: int = 0
    consecutive_mistakes: int = 0
    unproductive_iterations: int = 0
    last_fingerprint: Fingerprint | None = None
    fingerprint: Fingerprint | None = None
    #: (message count, last message, tokens) of the last prompt estimate, so the proactive
    #: compaction check only estimates new messages; compaction resets it.
    token_estimate: tuple[int, Message | None, int] = (0, None, 0)
    no_progress_snapshot: list[Message] | None = None
    mode_state: Any = None
    finish_reason: FinishReason | None = None
    halted_reason: str | None = None
    early_halt: str | None = None
    error_diagnostic: dict[str, Any] | None = None
    deliverable: Any = None
    submitted: bool = False
    started_at: float = field(default_factory=time.perf_counter)
    meta: dict[str, Any] = field(default_factory=dict)
    #: How ``spawn_agent`` builds a nested run (None: this run cannot spawn sub-agents).
    child_factory: ChildFactory | None = None
    #: The tools sub-agents choose from (None: this run's tools) and the system prompt they get
    #: (None: the run's); the ``orchestrate`` mode sets both.
    subagent_tools: dict[str, Tool] | None = None
    subagent_system_prompt: str | None = None
    #: Added to the system prompt of main calls (a mode's protocol).
    system_suffix: str = ""
    #: An ephemeral user note sent at the end of the next main call only, never persisted
    #: (ExAthena's ``phase_note``); the mode sets it before each iteration.
    phase_note: str | None = None
    #: The completion cap after a thinking-starvation escalation (kernel.starvation); it
    #: replaces the ``max_tokens`` option for the rest of the run.
    max_tokens_override: int | None = None
    #: An interrupted run's calls waiting for a human decision (kernel.hitl).
    pending_calls: list[ToolCall] | None = None
    #: The run's user turns: follow-ups to come and a record per turn (kernel.conversation).
    turn_log: TurnLog = field(default_factory=TurnLog)
    #: The asyncio task driving the loop now (kernel.loop): a ``GeneratorExit`` seen while it
    #: runs was raised by a plug-in, not thrown in to close the run's coroutine.
    driver: Any = None

    @property
    def llm_calls(self) -> int:
        return len(self.budget.calls)

    def emit(self, event: Event) -> None:
        """Deliver an event to every subscriber. A subscriber that raises halts the run at the
        next check (``error_halted``) instead of unwinding the loop mid-iteration."""
        if not self.subscribers:
            return
        from harness.kernel._isolated import cancels, own_cancel, unawaited

        mark = cancels()
        for subscriber in self.subscribers:
            try:
                answer: object = subscriber(event)
                # an async __call__, a lambda around one: closed, never run (round 20, part A)
                if unawaited(answer) and self.early_halt is None:
                    self.early_halt = "on_event returned a coroutine it did not await"
            except (KeyboardInterrupt, SystemExit):
                if own_cancel(mark):
                    self.meta["own_cancel"] = True
                raise
            except BaseException as exc:  # a GeneratorExit or CancelledError of its own too
                # Its text is its code: raising or cancelling the run's task, it left
                # harness.run as CancelledError (adversary round 19, part A).
                if self.early_halt is None:
                    self.early_halt = f"on_event raised {_text(exc)}"
            if own_cancel(mark):  # asyncio.current_task().cancel(): the run's task
                self.meta["own_cancel"] = True  # its pending cancel: taken at the run's end
                if self.early_halt is None:
                    self.early_halt = "on_event cancelled the run's task"

    def halt(self, reason: FinishReason, halted_reason: str | None = None) -> Halt:
        """Record how the run ends and return the matching :class:`Halt`, so a mode can end an
        iteration with ``return state.halt(FinishReason.STOP)``."""
        self.finish_reason = reason
        if halted_reason is not None:
            self.halted_reason = halted_reason
        return Halt(reason)

    def add_mistake_turn(self, any_error: bool, any_success: bool) -> None:
        """Count one turn's tool outcomes: +1 at most per turn; any success resets to 0."""
        if any_success:
            self.consecutive_mistakes = 0
        elif any_error:
            self.consecutive_mistakes += 1


def _text(exc: BaseException) -> str:
    """A subscriber's exception named (:func:`~harness._plugins.described`); a ``__str__``
    raising a ``GeneratorExit`` or a ``CancelledError`` of its own is a message that could not
    be read."""
    from harness._plugins import described

    try:
        return described(exc)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:
        return f"{type(exc).__name__} (its message could not be read)"
