"""Run options: each declared once, in a group by job, and validated once, before the loop
starts, into a :class:`RunConfig`.

Names and defaults follow ``ExAthena.Loop`` in snake_case (``max_iterations=25``,
``max_consecutive_mistakes=3``, ``max_unproductive_iterations=3``, ``tool_timeout_s=60``,
``max_concurrency=4``). Any problem raises :class:`~harness.errors.ConfigError` naming the option.

The groups (pydantic models, :data:`OPTION_GROUPS`) are where an option's name, type, default,
bounds and validator live: :class:`SetupOptions` (what runs, where), :class:`SamplingOptions`
(what each model request carries), :class:`ConversationOptions` (the messages and their
compaction), :class:`LimitOptions` (the caps that end a run), :class:`ToolOptions` (the tools,
their permissions and when a tool call ends the run) and :class:`TracingOptions` (who watches).
Callers pass them flat (``harness.run(..., max_iterations=5)``, a suite's ``max_iterations: 5``),
and :class:`RunConfig`, which inherits every group, holds them flat (``config.max_iterations``).
A new option is one line in its group; :class:`~harness.kernel.RunOptions`, the typed view of
``**options``, is generated from the groups (``python scripts/run_options.py``).
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)

from harness.errors import ConfigError

__all__ = [
    "OPTION_GROUPS",
    "ConversationOptions",
    "LimitOptions",
    "OneOrMany",
    "ProgressCheck",
    "RunConfig",
    "SamplingOptions",
    "SetupOptions",
    "ToolOptions",
    "TracingOptions",
    "parse_options",
]


def _one_or_many(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


#: How an iteration is judged productive (see ``LimitOptions.progress_check``).
ProgressCheck = Literal["mode", "strict", "lax"]

#: None, or a list of strings that may be given as one string (``stop="END"``,
#: ``until_tool="submit"``).
OneOrMany = Annotated[list[str] | None, BeforeValidator(_one_or_many)]


class _Group(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True, frozen=True)


class SetupOptions(_Group):
    """What runs and where: the provider and model, the mode, the workspace and the session."""

    provider: Any = None
    model: str | None = None
    provider_opts: dict[str, Any] = Field(default_factory=dict)
    #: The provider of ``spawn_agent`` sub-agents (a spec or a Provider object); None: the
    #: run's own provider object (the mock then serves the child's calls from the same script).
    subagent_provider: Any = None
    mode: Any = "react"
    cwd: Path | None = None
    workspace_files: dict[str, str] | None = None
    session_id: str | None = None
    assigns: dict[str, Any] = Field(default_factory=dict)


class SamplingOptions(_Group):
    """What each model request carries besides the messages and the tools."""

    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)
    #: Sampling seed, sent to providers that take one (OpenAI format, Ollama); the bench uses
    #: the epoch number so that epochs differ the way sampling does, reproducibly.
    seed: int | None = None
    max_tokens: int | None = Field(default=None, gt=0)
    stop: OneOrMany = None
    timeout_s: float | None = Field(default=None, gt=0)
    tool_choice: str | dict[str, Any] | None = None
    response_format: dict[str, Any] | None = None
    #: Few-shot conversations sent before the run's messages with every tool-offering call,
    #: rendered through the provider's tool protocol (the profile ``Example`` form:
    #: ``{messages: [...], tools: [...]}``; ``tools: []`` sends one whatever tools are offered).
    examples: list[dict[str, Any]] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

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


class ConversationOptions(_Group):
    """The messages: the system prompt, a prior conversation, follow-up user turns, and when
    the context is compacted."""

    system_prompt: str | None = None
    messages: list[Any] | None = None
    #: Follow-up user turns (kernel.conversation): each a string, a ``{user, add_tools}``
    #: mapping or an object with those attributes; stored as ``UserTurn`` objects.
    turns: list[Any] | None = None
    compact_at: float = Field(default=0.6, gt=0, le=1)
    context_window: int | None = Field(default=None, gt=0)
    reactive_compact: bool = True

    @field_validator("turns", mode="before")
    @classmethod
    def _turns(cls, value: Any) -> Any:
        from harness.kernel._user_turns import parse_turn

        if value is None:
            return None
        if isinstance(value, str | bytes) or not isinstance(value, Sequence):
            raise ValueError("must be a list of follow-up turns (strings or {user, add_tools})")
        return [parse_turn(item, f"turns[{i}]") for i, item in enumerate(value)]


class LimitOptions(_Group):
    """The caps that end a run: iterations, mistakes, no progress, spend, steps per user turn,
    reflections and sub-agent depth."""

    max_iterations: int = Field(default=25, ge=1)
    max_consecutive_mistakes: int = Field(default=3, ge=1)
    max_unproductive_iterations: int = Field(default=3, ge=0)
    #: Which no-progress check counts an iteration as productive: ``mode`` (ExAthena: ReAct
    #: strict, the other modes lax), or ``strict`` / ``lax`` for every mode, so that a
    #: comparison of modes can hold it equal.
    progress_check: ProgressCheck = "mode"
    max_budget_usd: float | None = Field(default=None, gt=0)
    #: Tool-calling steps allowed in one user turn (None: no cap); past it the run ends as
    #: ``error_max_steps_per_turn``.
    max_steps_per_turn: int | None = Field(default=None, ge=1)
    max_reflections: int = Field(default=3, ge=0)
    #: How deep sub-agents may nest: 1 lets the run spawn sub-agents that cannot spawn their own.
    max_agent_depth: int = Field(default=1, ge=1)


class ToolOptions(_Group):
    """The tools: which are offered, which may run (permissions and hooks), how they run, and
    which call ends the run or pauses it for a human."""

    tools: Any = "all"
    allowed_tools: list[str] | None = None
    disallowed_tools: list[str] | None = None
    can_use_tool: Callable[..., Any] | None = None
    hooks: dict[str, Any] | None = None
    phase: str = "default"
    tool_timeout_s: float = Field(default=60.0, gt=0)
    #: What a call past ``tool_timeout_s`` (wall clock) becomes: ``"tell_model"``, an error
    #: result the model sees (ExAthena's behaviour), or ``"end_run"``, a
    #: :class:`~harness.errors.ToolSafetyNet` that ends the run as ``error_during_execution``
    #: (an infrastructure error). A wall-clock expiry depends on the machine's load, so the
    #: bench runs cells with ``"end_run"``: what the model sees never depends on load.
    on_tool_timeout: Literal["tell_model", "end_run"] = "tell_model"
    max_concurrency: int = Field(default=4, ge=1)
    until_tool: OneOrMany = None
    until_tool_success: bool = True
    #: Tool names or fnmatch globs whose calls pause the run for a human decision
    #: (``interrupted``; :func:`harness.resume` continues it). See :mod:`harness.kernel._hitl`.
    interrupt_before: OneOrMany = None

    @field_validator("phase")
    @classmethod
    def _phase(cls, value: str) -> str:
        from harness.kernel._permissions import Phase

        try:
            return Phase(value).value
        except ValueError:
            raise ValueError(f"must be one of {', '.join(p.value for p in Phase)}") from None


class TracingOptions(_Group):
    """Who watches the run: the ``on_event`` callback and OpenTelemetry (harness.telemetry:
    where spans go, whether message text is recorded, the root-span attributes the bench adds)."""

    on_event: Callable[[Any], None] | None = None
    tracer_provider: Any = None
    capture_content: bool | None = None
    trace_attributes: dict[str, Any] | None = None

    @field_validator("tracer_provider")
    @classmethod
    def _tracer_provider(cls, value: Any) -> Any:
        if value is not None and not callable(getattr(value, "get_tracer", None)):
            raise ValueError("must be an OpenTelemetry TracerProvider (an object with get_tracer)")
        return value

    @field_validator("on_event")
    @classmethod
    def _sync_callback(cls, value: Any) -> Any:
        if value is not None and inspect.iscoroutinefunction(value):
            raise ValueError(
                "must be a plain (sync) callable; it is called in the loop for every event"
            )
        return value


#: The groups, in the order the docs and :class:`~harness.kernel.RunOptions` list them.
OPTION_GROUPS: tuple[type[BaseModel], ...] = (
    SetupOptions,
    SamplingOptions,
    ConversationOptions,
    LimitOptions,
    ToolOptions,
    TracingOptions,
)


class RunConfig(
    TracingOptions, ToolOptions, LimitOptions, ConversationOptions, SamplingOptions, SetupOptions
):
    """The validated options of one run: every group's options, flat (``config.max_iterations``).
    Declares nothing itself."""


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
