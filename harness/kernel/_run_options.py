"""``RunOptions``: the keyword options of :func:`harness.run` / :func:`harness.arun`, for
type checkers (``**options: Unpack[RunOptions]``), each typed as what a caller may pass.

Generated from the option groups of :mod:`harness.kernel._options` by
``python scripts/run_options.py``; do not edit (tests/kernel/test_options.py fails when it is
out of date). An option's default, bounds and meaning are in its group.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypedDict

__all__ = ["RunOptions"]


class RunOptions(TypedDict, total=False):
    """Keyword options of :func:`harness.run` / :func:`harness.arun`, for type checkers (generated
    from the option groups such as :class:`LimitOptions`, which define and validate them)."""

    # SetupOptions -- what runs and where: the provider and model, the mode, the workspace and the
    # session.
    provider: Any
    model: str | None
    provider_opts: Mapping[str, Any]
    subagent_provider: Any
    mode: Any
    cwd: str | Path | None
    workspace_files: Mapping[str, str] | None
    session_id: str | None
    assigns: Mapping[str, Any]

    # SamplingOptions -- what each model request carries besides the messages and the tools.
    temperature: float | None
    top_p: float | None
    seed: int | None
    max_tokens: int | None
    stop: str | Sequence[str] | None
    timeout_s: float | None
    tool_choice: str | Mapping[str, Any] | None
    response_format: Mapping[str, Any] | None
    examples: Sequence[Mapping[str, Any]] | None
    metadata: Mapping[str, Any]

    # ConversationOptions -- the messages: the system prompt, a prior conversation, follow-up user
    # turns, and when the context is compacted.
    system_prompt: str | None
    messages: Sequence[Any] | None
    turns: Sequence[Any] | None
    compact_at: float
    context_window: int | None
    reactive_compact: bool

    # LimitOptions -- the caps that end a run: iterations, mistakes, no progress, spend, steps per
    # user turn, reflections and sub-agent depth.
    max_iterations: int
    max_consecutive_mistakes: int
    max_unproductive_iterations: int
    progress_check: Literal["mode", "strict", "lax"]
    max_budget_usd: float | None
    max_steps_per_turn: int | None
    max_reflections: int
    max_agent_depth: int

    # ToolOptions -- the tools: which are offered, which may run (permissions and hooks), how they
    # run, and which call ends the run or pauses it for a human.
    tools: Any
    allowed_tools: Sequence[str] | None
    disallowed_tools: Sequence[str] | None
    can_use_tool: Callable[..., Any] | None
    hooks: Mapping[str, Any] | None
    phase: str
    tool_timeout_s: float
    on_tool_timeout: Literal["tell_model", "end_run"]
    max_concurrency: int
    until_tool: str | Sequence[str] | None
    until_tool_success: bool
    interrupt_before: str | Sequence[str] | None

    # TracingOptions -- who watches the run: the ``on_event`` callback and OpenTelemetry
    # (harness.telemetry: where spans go, whether message text is recorded, the root-span attributes
    # the bench adds).
    on_event: Callable[[Any], None] | None
    tracer_provider: Any
    capture_content: bool | None
    trace_attributes: Mapping[str, Any] | None
