"""Typed run terminations and their categories (port of ``ExAthena.Loop.Terminations``).

Every run ends with exactly one :class:`FinishReason`. Its :class:`Category` tells a caller what to
do about it: ``success``; ``capacity`` (a configured limit was hit: raise it or narrow the task);
``retryable`` (transient: a new run may succeed); ``fatal`` (do not retry without operator action);
``paused`` (the run waits for a human decision: ``harness.resume`` continues it).
"""

from __future__ import annotations

from enum import StrEnum

from harness.errors import ConfigError

__all__ = ["Category", "FinishReason", "all", "category", "is_error", "is_success"]


class Category(StrEnum):
    SUCCESS = "success"
    CAPACITY = "capacity"
    RETRYABLE = "retryable"
    FATAL = "fatal"
    PAUSED = "paused"


class FinishReason(StrEnum):
    """Why a run ended. Values are ExAthena's termination atoms without the colon."""

    STOP = "stop"
    SUBMITTED = "submitted"
    ERROR_MAX_TURNS = "error_max_turns"
    ERROR_MAX_BUDGET_USD = "error_max_budget_usd"
    ERROR_MAX_STRUCTURED_OUTPUT_RETRIES = "error_max_structured_output_retries"
    ERROR_CONSECUTIVE_MISTAKES = "error_consecutive_mistakes"
    ERROR_PROMPT_TOO_LONG = "error_prompt_too_long"
    ERROR_NO_PROGRESS = "error_no_progress"
    ERROR_THINKING_STARVED = "error_thinking_starved"
    #: A user turn went past ``max_steps_per_turn`` tool-calling steps (BFCL's force_terminated).
    ERROR_MAX_STEPS_PER_TURN = "error_max_steps_per_turn"
    ERROR_DURING_EXECUTION = "error_during_execution"
    ERROR_SCHEMA_VALIDATION = "error_schema_validation"
    ERROR_UNTIL_TOOL_NOT_CALLED = "error_until_tool_not_called"
    ERROR_HALTED = "error_halted"
    ERROR_COMPACTION_FAILED = "error_compaction_failed"
    ERROR_PROVIDER_AUTH = "error_provider_auth"
    INTERRUPTED = "interrupted"

    @property
    def category(self) -> Category:
        return _CATEGORY[self]


_CATEGORY: dict[FinishReason, Category] = {
    FinishReason.STOP: Category.SUCCESS,
    FinishReason.SUBMITTED: Category.SUCCESS,
    FinishReason.ERROR_MAX_TURNS: Category.CAPACITY,
    FinishReason.ERROR_MAX_BUDGET_USD: Category.CAPACITY,
    FinishReason.ERROR_MAX_STRUCTURED_OUTPUT_RETRIES: Category.CAPACITY,
    FinishReason.ERROR_CONSECUTIVE_MISTAKES: Category.CAPACITY,
    FinishReason.ERROR_PROMPT_TOO_LONG: Category.CAPACITY,
    FinishReason.ERROR_NO_PROGRESS: Category.CAPACITY,
    FinishReason.ERROR_THINKING_STARVED: Category.CAPACITY,
    FinishReason.ERROR_MAX_STEPS_PER_TURN: Category.CAPACITY,
    FinishReason.ERROR_DURING_EXECUTION: Category.RETRYABLE,
    FinishReason.ERROR_SCHEMA_VALIDATION: Category.RETRYABLE,
    FinishReason.ERROR_UNTIL_TOOL_NOT_CALLED: Category.RETRYABLE,
    FinishReason.ERROR_HALTED: Category.FATAL,
    FinishReason.ERROR_COMPACTION_FAILED: Category.FATAL,
    FinishReason.ERROR_PROVIDER_AUTH: Category.FATAL,
    FinishReason.INTERRUPTED: Category.PAUSED,
}


def _coerce(reason: FinishReason | str) -> FinishReason:
    try:
        return FinishReason(reason)
    except ValueError:
        known = ", ".join(r.value for r in FinishReason)
        raise ConfigError(f"unknown finish reason {reason!r}; known: {known}") from None


def category(reason: FinishReason | str) -> Category:
    """The category of a finish reason (accepts the enum or its string value)."""
    return _CATEGORY[_coerce(reason)]


def is_success(reason: FinishReason | str) -> bool:
    return category(reason) is Category.SUCCESS


def is_error(reason: FinishReason | str) -> bool:
    return not is_success(reason)


def all() -> list[FinishReason]:
    """Every finish reason, in declaration order."""
    return list(FinishReason)
