"""The flat event stream of a run (port of ``ExAthena.Loop.Events``).

One frozen, slotted dataclass per kind, made to be matched with ``match``::

    match event:
        case Content(text=t): print(t, end="")
        case ToolCallEvent(call=c): print("->", c.name, c.arguments)
        case Done(result=r): print(r.finish_reason)

Ordering guarantees: a ``ToolCallEvent`` comes before its ``ToolResultEvent``; ``ToolUI`` after
that result; a call's streamed ``Content``/``Thinking`` deltas come between its ``CallStarted``
and ``CallFinished`` (unstreamed text comes as one ``Content`` right after ``CallFinished``);
``Submitted`` just before ``Done``; ``Done`` is always last and emitted exactly once. A run with
follow-up user turns (``turns=``) frames each user turn with ``TurnStarted`` ... ``TurnEnded``
(every event of the turn's iterations comes between them; the pair is balanced before ``Done``);
a run without follow-up turns emits neither.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from harness.core._budget import CallPurpose, CallRecord
from harness.core._messages import TokenUsage, ToolCall, ToolResult, UIPayload
from harness.core._terminations import FinishReason

if TYPE_CHECKING:
    from harness.core._result import Result

__all__ = [
    "CallFinished",
    "CallStarted",
    "Compaction",
    "Content",
    "Done",
    "Event",
    "Iteration",
    "MaxTokensEscalation",
    "RunWarning",
    "StructuredRetry",
    "SubagentResult",
    "SubagentSpawn",
    "Submitted",
    "Thinking",
    "ToolCallEvent",
    "ToolResultEvent",
    "ToolUI",
    "TurnEnded",
    "TurnStarted",
    "Usage",
    "event_classes",
]


@dataclass(slots=True, frozen=True)
class TurnStarted:
    """A user turn of a conversation starts: ``index`` 0 is the first prompt, then one per
    follow-up turn, with the tools the turn added (by name). A resumed run (``harness.resume``)
    starts its paused turn again with the same index."""

    index: int
    user: str
    added_tools: tuple[str, ...] = ()


@dataclass(slots=True, frozen=True)
class TurnEnded:
    """A user turn of a conversation ended: with its text ``reply`` (``finish_reason`` ``stop``)
    or with the run's ending (the reason the run stopped during the turn; ``reply`` None).
    ``steps`` counts the turn's tool-calling model replies."""

    index: int
    reply: str | None
    steps: int
    finish_reason: FinishReason


@dataclass(slots=True, frozen=True)
class Iteration:
    """An iteration is starting (after the checks, compaction and before PreIteration)."""

    n: int
    unproductive_iterations: int = 0


@dataclass(slots=True, frozen=True)
class CallStarted:
    """A provider call is about to be made."""

    index: int
    purpose: CallPurpose
    model: str | None
    provider: str


@dataclass(slots=True, frozen=True)
class CallFinished:
    """A provider call returned (or failed: ``record.error`` is set)."""

    record: CallRecord
    provider: str


@dataclass(slots=True, frozen=True)
class Content:
    """Assistant text: a streamed delta, or the whole text of a turn."""

    text: str
    purpose: CallPurpose = "main"


@dataclass(slots=True, frozen=True)
class Thinking:
    """Model reasoning: a streamed delta, or the whole reasoning of a turn."""

    text: str
    purpose: CallPurpose = "main"


@dataclass(slots=True, frozen=True)
class ToolCallEvent:
    """The model asked for a tool call (emitted before permissions and hooks gate it)."""

    call: ToolCall
    parallel: bool = False


@dataclass(slots=True, frozen=True)
class ToolResultEvent:
    """A tool call's result, denials and failures included (``result.is_error``)."""

    call: ToolCall
    result: ToolResult
    duration_ms: float = 0.0


@dataclass(slots=True, frozen=True)
class ToolUI:
    """A tool's UI payload, after its result."""

    tool_call_id: str
    ui: UIPayload


@dataclass(slots=True, frozen=True)
class Compaction:
    """The context was compacted."""

    before_tokens: int
    after_tokens: int
    stages: tuple[str, ...]
    reason: Literal["token_budget", "reactive_recovery"]
    dropped_count: int = 0


@dataclass(slots=True, frozen=True)
class MaxTokensEscalation:
    """A turn was starved (its whole output cap spent, no text, no tool calls): the completion
    cap goes from ``from_tokens`` to ``to_tokens`` for the rest of the run, and the turn is
    retried once."""

    from_tokens: int
    to_tokens: int
    output_tokens: int
    reasoning_tokens: int


@dataclass(slots=True, frozen=True)
class SubagentSpawn:
    """A ``spawn_agent`` call is starting a nested run (``id`` names the sub-agent)."""

    id: str
    prompt: str
    tool_call_id: str = ""


@dataclass(slots=True, frozen=True)
class SubagentResult:
    """A sub-agent's run ended; ``text`` is its final answer (None when it gave none)."""

    id: str
    text: str | None
    finish_reason: str


@dataclass(slots=True, frozen=True)
class Usage:
    """Token usage (and cost, when known) of one provider call."""

    usage: TokenUsage
    cost_usd: float | None
    purpose: CallPurpose = "main"


@dataclass(slots=True, frozen=True)
class StructuredRetry:
    """``extract_structured`` is asking again after a parse or validation error."""

    attempt: int
    error: str


@dataclass(slots=True, frozen=True)
class RunWarning:
    """A non-fatal problem worth seeing (a skipped reflection, a crashing Stop hook...).

    Formerly ``Warning``, which shadowed the builtin; that name still imports, with a
    ``DeprecationWarning``. Telemetry still records it as the ``harness.warning`` span event.
    """

    message: str
    source: str = "kernel"
    detail: Any = None


@dataclass(slots=True, frozen=True)
class Submitted:
    """The run ended by submission (the finish tool or an ``until_tool`` call)."""

    deliverable: Any


@dataclass(slots=True, frozen=True)
class Done:
    """The run is over. Always the last event, exactly once."""

    result: Result


Event = (
    TurnStarted
    | TurnEnded
    | Iteration
    | CallStarted
    | CallFinished
    | Content
    | Thinking
    | ToolCallEvent
    | ToolResultEvent
    | ToolUI
    | Compaction
    | MaxTokensEscalation
    | SubagentSpawn
    | SubagentResult
    | Usage
    | StructuredRetry
    | RunWarning
    | Submitted
    | Done
)


def event_classes() -> tuple[type, ...]:
    """Every event class (telemetry tests use this to check that each one is mapped)."""
    return (
        TurnStarted,
        TurnEnded,
        Iteration,
        CallStarted,
        CallFinished,
        Content,
        Thinking,
        ToolCallEvent,
        ToolResultEvent,
        ToolUI,
        Compaction,
        MaxTokensEscalation,
        SubagentSpawn,
        SubagentResult,
        Usage,
        StructuredRetry,
        RunWarning,
        Submitted,
        Done,
    )


def __getattr__(name: str) -> Any:
    """``Warning`` is the deprecated name of :class:`RunWarning` (it shadowed the builtin)."""
    if name == "Warning":
        warnings.warn(
            "harness.events.Warning is deprecated; use RunWarning",
            DeprecationWarning,
            stacklevel=2,
        )
        return RunWarning
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
