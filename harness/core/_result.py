"""The :class:`Result` of a run: one pydantic model, JSON-serialisable, whatever the ending."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from harness.core._budget import CallRecord
from harness.core._messages import Message, TokenUsage, ToolCall
from harness.core._terminations import Category, FinishReason

__all__ = ["Result", "StepCall", "TurnRecord", "UsageTotals"]


@dataclass(slots=True, frozen=True)
class UsageTotals:
    """Token totals over every provider call of a run (plan, reflect, compact... included)."""

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    reasoning_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    @classmethod
    def of(cls, usage: TokenUsage) -> UsageTotals:
        return cls(
            usage.input_tokens,
            usage.output_tokens,
            usage.total_tokens,
            usage.reasoning_tokens,
            usage.cache_read_tokens,
            usage.cache_write_tokens,
        )


#: One tool call as the model made it in a step: ``(tool name, arguments)``.
StepCall = tuple[str, dict[str, Any]]


class TurnRecord(BaseModel):
    """What happened in one user turn of a run (``Result.turns``; a run without follow-up
    turns has one).

    ``steps`` has one entry per model reply that asked for tools, in order, each the list of
    ``(name, arguments)`` calls of that reply as the model made them (before permissions,
    hooks or a reviewer changed anything). ``reply`` is the turn's text answer (None when the
    turn ended otherwise); ``finish_reason`` is ``stop`` for a turn that got its answer, else
    how the run ended during it (the run's ``finish_reason``)."""

    model_config = ConfigDict(frozen=True)

    index: int
    user: str
    added_tools: list[str] = Field(default_factory=list)
    steps: list[list[StepCall]] = Field(default_factory=list)
    reply: str | None = None
    finish_reason: FinishReason | None = None


class Result(BaseModel):
    """How a run ended and what it produced and cost.

    ``iterations`` counts continued iterations only (the final answer turn is not counted);
    ``llm_calls`` counts every provider call, whatever its purpose; ``calls`` has one record each.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    finish_reason: FinishReason
    category: Category
    text: str | None = None
    deliverable: Any = None
    messages: list[Message] = Field(default_factory=list)
    iterations: int = 0
    tool_calls_made: int = 0
    llm_calls: int = 0
    usage: UsageTotals = Field(default_factory=UsageTotals)
    cost_usd: float | None = None
    duration_ms: float = 0.0
    model: str | None = None
    provider: str | None = None
    mode: str | None = None
    session_id: str | None = None
    halted_reason: str | None = None
    error_diagnostic: dict[str, Any] | None = None
    no_progress_snapshot: list[Message] | None = None
    trace_id: str | None = None
    calls: list[CallRecord] = Field(default_factory=list)
    #: The run's ``assigns`` at the end: the ``assigns`` option merged with every state update
    #: tools returned (``ToolOutput.assigns``).
    assigns: dict[str, Any] = Field(default_factory=dict)
    #: One record per user turn started (the first prompt, then each follow-up ``turns=`` item).
    turns: list[TurnRecord] = Field(default_factory=list)
    #: ``interrupted`` runs: the calls waiting for a decision (``harness.resume``).
    pending_tool_calls: list[ToolCall] | None = None
    #: ``interrupted`` runs: the live run state that ``harness.resume`` continues (not
    #: serialised; None once resumed or discarded).
    resume_state: Any = Field(default=None, exclude=True, repr=False)

    @property
    def success(self) -> bool:
        return self.category is Category.SUCCESS

    @property
    def is_error(self) -> bool:
        return not self.success
