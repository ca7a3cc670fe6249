"""Run options: validated once, before the loop starts, into a :class:`RunConfig`.

Names and defaults follow ``ExAthena.Loop`` in snake_case (``max_iterations=25``,
``max_consecutive_mistakes=3``, ``max_unproductive_iterations=3``, ``tool_timeout_s=60``,
``max_concurrency=4``). Any problem raises :class:`~harness.errors.ConfigError` naming the option.

:class:`RunConfig` is the source: the names, defaults, bounds and validators of every option.
:class:`RunOptions` is its typed view for ``**options`` (:func:`harness.run` takes
``Unpack[RunOptions]``, which a type checker can check and a pydantic model cannot provide): the
same keys, each typed as the input RunConfig accepts (a ``Sequence`` for a ``list`` field, a
``Mapping`` for a ``dict``, ``str`` too for a ``Path``, one string for the fields in
:data:`ONE_OR_MANY`). ``tests/kernel/test_options.py`` fails when the two drift apart.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypedDict

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from harness.errors import ConfigError

__all__ = ["ONE_OR_MANY", "RunConfig", "RunOptions", "parse_options"]

#: Options that take one string or a list of them (RunConfig stores a list).
ONE_OR_MANY = ("stop", "until_tool", "interrupt_before")


class RunOptions(TypedDict, total=False):
    """Keyword options of :func:`harness.run` / :func:`harness.arun`, for type checkers: the
    typed view of :class:`RunConfig` (see the module docs), which defines and validates them."""

    provider: Any
    model: str | None
    system_prompt: str | None
    messages: Sequence[Any] | None
    temperature: float | None
    top_p: float | None
    seed: int | None
    max_tokens: int | None
    stop: str | Sequence[str] | None
    timeout_s: float | None
    tool_choice: str | dict[str, Any] | None
    response_format: dict[str, Any] | None
    examples: Sequence[dict[str, Any]] | None
    provider_opts: Mapping[str, Any]
    metadata: Mapping[str, Any]
    tools: Any
    mode: Any
    cwd: str | Path | None
    workspace_files: Mapping[str, str] | None
    phase: str
    assigns: Mapping[str, Any]
    allowed_tools: Sequence[str] | None
    disallowed_tools: Sequence[str] | None
    can_use_tool: Callable[..., Any] | None
    hooks: Mapping[str, Any] | None
    max_iterations: int
    max_consecutive_mistakes: int
    max_unproductive_iterations: int
    progress_check: Literal["mode", "strict", "lax"]
    max_budget_usd: float | None
    tool_timeout_s: float
    max_concurrency: int
    max_reflections: int
    compact_at: float
    context_window: int | None
    reactive_compact: bool
    on_event: Callable[[Any], None] | None
    until_tool: str | Sequence[str] | None
    until_tool_success: bool
    subagent_provider: Any
    interrupt_before: str | Sequence[str] | None
    max_agent_depth: int
    session_id: str | None
    tracer_provider: Any
    capture_content: bool | None
    trace_attributes: Mapping[str, Any] | None
    turns: Sequence[Any] | None
    max_steps_per_turn: int | None


class RunConfig(BaseModel):
    """The validated options of one run: the one definition of every option (name, default,
    bounds); :class:`RunOptions` mirrors it for type checkers."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True, frozen=True)

    provider: Any = None
    model: str | None = None
    system_prompt: str | None = None
    messages: list[Any] | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)
    #: Sampling seed, sent to providers that take one (OpenAI format, Ollama); the bench uses
    #: the epoch number so that epochs differ the way sampling does, reproducibly.
    seed: int | None = None
    max_tokens: int | None = Field(default=None, gt=0)
    stop: list[str] | None = None
    timeout_s: float | None = Field(default=None, gt=0)
    tool_choice: str | dict[str, Any] | None = None
    response_format: dict[str, Any] | None = None
    #: Few-shot conversations sent before the run's messages with every tool-offering call,
    #: rendered through the provider's tool protocol (the profile ``Example`` form:
    #: ``{messages: [...], tools: [...]}``; ``tools: []`` sends one whatever tools are offered).
    examples: list[dict[str, Any]] | None = None
    provider_opts: dict[str, Any] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)
    tools: Any = "all"
    mode: Any = "react"
    cwd: Path | None = None
    workspace_files: dict[str, str] | None = None
    phase: str = "default"
    assigns: dict[str, Any] = Field(default_factory=dict)
    allowed_tools: list[str] | None = None
    disallowed_tools: list[str] | None = None
    can_use_tool: Callable[..., Any] | None = None
    hooks: dict[str, Any] | None = None
    max_iterations: int = Field(default=25, ge=1)
    max_consecutive_mistakes: int = Field(default=3, ge=1)
    max_unproductive_iterations: int = Field(default=3, ge=0)
    #: Which no-progress check counts an iteration as productive: ``mode`` (ExAthena: ReAct
    #: strict, the other modes lax), or ``strict`` / ``lax`` for every mode, so that a
    #: comparison of modes can hold it equal.
    progress_check: Literal["mode", "strict", "lax"] = "mode"
    max_budget_usd: float | None = Field(default=None, gt=0)
    tool_timeout_s: float = Field(default=60.0, gt=0)
    max_concurrency: int = Field(default=4, ge=1)
    max_reflections: int = Field(default=3, ge=0)
    compact_at: float = Field(default=0.6, gt=0, le=1)
    context_window: int | None = Field(default=None, gt=0)
    reactive_compact: bool = True
    on_event: Callable[[Any], None] | None = None
    until_tool: list[str] | None = None
    until_tool_success: bool = True
    #: The provider of ``spawn_agent`` sub-agents (a spec or a Provider object); None: the
    #: run's own provider object (the mock then serves the child's calls from the same script).
    subagent_provider: Any = None
    #: Tool names or fnmatch globs whose calls pause the run for a human decision
    #: (``interrupted``; :func:`harness.resume` continues it). See :mod:`harness.kernel._hitl`.
    interrupt_before: list[str] | None = None
    #: How deep sub-agents may nest: 1 lets the run spawn sub-agents that cannot spawn their own.
    max_agent_depth: int = Field(default=1, ge=1)
    session_id: str | None = None
    # Telemetry (harness.telemetry): where spans go, whether message text is recorded, and the
    # root-span attributes the bench adds (suite, task, mode, provider, epoch).
    tracer_provider: Any = None
    capture_content: bool | None = None
    trace_attributes: dict[str, Any] | None = None
    #: Follow-up user turns (kernel.conversation): each a string, a ``{user, add_tools}``
    #: mapping or an object with those attributes; stored as ``UserTurn`` objects.
    turns: list[Any] | None = None
    #: Tool-calling steps allowed in one user turn (None: no cap); past it the run ends as
    #: ``error_max_steps_per_turn``.
    max_steps_per_turn: int | None = Field(default=None, ge=1)

    @field_validator(*ONE_OR_MANY, mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("turns", mode="before")
    @classmethod
    def _turns(cls, value: Any) -> Any:
        from harness.kernel._conversation import parse_turn

        if value is None:
            return None
        if isinstance(value, str | bytes) or not isinstance(value, Sequence):
            raise ValueError("must be a list of follow-up turns (strings or {user, add_tools})")
        return [parse_turn(item, f"turns[{i}]") for i, item in enumerate(value)]

    @field_validator("phase")
    @classmethod
    def _phase(cls, value: str) -> str:
        from harness.kernel._permissions import Phase

        try:
            return Phase(value).value
        except ValueError:
            raise ValueError(f"must be one of {', '.join(p.value for p in Phase)}") from None

    @field_validator("examples")
    @classmethod
    def _examples(cls, value: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
        from harness.providers._profiles import Example

        for i, example in enumerate(value or ()):
            try:
                Example.model_validate(example)
            except ValueError as exc:
                raise ValueError(f"examples[{i}]: {exc}") from None
        return value

    @field_validator("tracer_provider")
    @classmethod
    def _tracer_provider(cls, value: Any) -> Any:
        if value is not None and not callable(getattr(value, "get_tracer", None)):
            raise ValueError("must be an OpenTelemetry TracerProvider (an object with get_tracer)")
        return value

    @field_validator("on_event")
    @classmethod
    def _sync_callback(cls, value: Any) -> Any:
        import inspect

        if value is not None and inspect.iscoroutinefunction(value):
            raise ValueError(
                "must be a plain (sync) callable; it is called in the loop for every event"
            )
        return value


_FIELDS = tuple(RunConfig.model_fields)


def parse_options(options: Mapping[str, Any]) -> RunConfig:
    """Validate keyword options, raising ConfigError that names the option and the fix."""
    unknown = [k for k in options if k not in RunConfig.model_fields]
    if unknown:
        key = unknown[0]
        close = difflib.get_close_matches(key, _FIELDS, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigError(f"unknown option {key!r}{hint}")
    try:
        return RunConfig.model_validate(dict(options))
    except ValidationError as exc:
        err = exc.errors()[0]
        name = ".".join(str(p) for p in err["loc"]) or "options"
        raise ConfigError(
            f"invalid option {name}: {err['msg']} (got {err.get('input')!r})"
        ) from None
