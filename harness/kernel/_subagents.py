"""Sub-agents: the kernel side of ``spawn_agent`` (port of ExAthena's SpawnAgent, A15).

A sub-agent is a nested run of the loop, awaited inside the parent's tool call. The child:

- uses the parent's provider object (so the mock serves the child's calls from the same script,
  interleaved in call order) unless the run option ``subagent_provider`` names another;
- gets the mode asked for (default ``react``), the parent's tools or the subset asked for
  (``spawn_agent`` itself only while ``max_agent_depth`` allows deeper nesting), at most the
  parent's ``max_iterations``, the parent's permissions and PreToolUse hooks, a copy of its
  ``assigns``, and what is left of its ``max_budget_usd``;
- works in the parent's workspace, or in a subfolder of it (created) when asked.

Every provider call of the child is recorded in the parent's budget with purpose ``subagent``
(and ``agent`` = the sub-agent id), so its usage and cost are in the parent's Result and count
toward the parent's ``max_budget_usd``. Events ``SubagentSpawn`` / ``SubagentResult`` and hooks
``SubagentStart`` / ``SubagentStop`` frame the child. A child that does not succeed is an error
result for the parent (what it said last is included), as in ExAthena HEAD.

The kernel cannot build a run itself (modes and the registries sit above it): the facade
installs ``State.child_factory``, which turns run options into a ready child State.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from harness.core._messages import UIPayload
from harness.errors import ConfigError, ToolError
from harness.events import SubagentResult, SubagentSpawn
from harness.kernel._hooks import HookEvent
from harness.tools._base import ToolContext, ToolOutput, render

if TYPE_CHECKING:
    from harness.core._result import Result
    from harness.kernel._state import State
    from harness.tools._workspace import Workspace

__all__ = ["SPAWN_TOOL", "run_subagent"]

SPAWN_TOOL = "spawn_agent"


async def run_subagent(state: State, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    """Run one sub-agent for the ``spawn_agent`` call ``ctx.tool_call_id``; its final text is
    the tool's result. Raises ToolError (an error result for the model) when it cannot start or
    does not succeed."""
    from harness.kernel._loop import run_loop  # the loop module imports this one's users

    if state.child_factory is None:
        raise ToolError("spawn_agent: this run cannot start sub-agents")
    n = state.meta.get("subagents", 0) + 1
    state.meta["subagents"] = n
    sub_id = f"{state.session_id}/sub-{n}"
    prompt: str = args["prompt"]
    overrides = _child_options(state, args)
    folder = _workspace(state, args.get("subfolder"))
    state.emit(SubagentSpawn(sub_id, prompt, ctx.tool_call_id))
    await _fire(state, HookEvent.SUBAGENT_START, {"subagent_id": sub_id, "prompt": prompt,
                "parent_session_id": state.session_id, "mode": overrides["mode"]})  # fmt: skip
    try:
        child, owned = state.child_factory(state, prompt, overrides)
    except ConfigError as exc:
        await _stopped(state, sub_id, "error", None, "error", str(exc))
        raise ToolError(f"spawn_agent: cannot start the sub-agent: {exc}") from None
    child.meta["agent_depth"] = state.meta.get("agent_depth", 0) + 1
    # The shared workspace is a borrowed view, created lazily; a subfolder is pinned by
    # descriptor (never handed over as a path the child would look up again by name).
    child.ctx.workspace = folder if folder is not None else state.ctx.workspace.shared()
    result: Result | None = None
    try:
        result = await run_loop(child, owns_provider=owned)
    finally:
        _roll_up(state, child, sub_id)
        if result is None:  # cancelled or timed out: the child's Done was still emitted
            await _stopped(state, sub_id, "timeout", None, "error_halted", "cancelled")
    reason = result.finish_reason.value
    text = result.text if result.text is not None else _render(result.deliverable)
    outcome = "ok" if result.success else "incomplete"
    await _stopped(state, sub_id, outcome, text, reason, result.halted_reason)
    if not result.success:
        said = f" Its last words: {text[:2000]}" if text else ""
        raise ToolError(
            f"the sub-agent did not finish ({reason}"
            f"{': ' + result.halted_reason if result.halted_reason else ''}).{said} "
            "Delegate again with a narrower or clearer brief, or do the step yourself."
        )
    payload = {
        "id": sub_id,
        "prompt": prompt,
        "mode": result.mode,
        "finish_reason": reason,
        "iterations": result.iterations,
        "tool_calls_made": result.tool_calls_made,
        "llm_calls": result.llm_calls,
        "cost_usd": result.cost_usd,
        "duration_ms": round(result.duration_ms, 3),
        "text": text,
    }
    return ToolOutput(text or "", UIPayload("subagent", payload))


def _child_options(state: State, args: dict[str, Any]) -> dict[str, Any]:
    """The child's run options (on top of the parent's), or ToolError naming the bad argument."""
    cfg = state.config
    depth = state.meta.get("agent_depth", 0)
    nest = depth + 1 < cfg.max_agent_depth
    pool = state.subagent_tools if state.subagent_tools is not None else state.tools
    names = args.get("tools")
    if names is None:
        names = [n for n in pool if n != SPAWN_TOOL or nest]
    else:
        unknown = [n for n in names if n not in pool]
        if unknown:
            raise ToolError(
                f"spawn_agent: unknown tool(s) {', '.join(map(repr, unknown))}; a sub-agent can "
                f"only use these tools: {', '.join(sorted(pool)) or '(none)'}"
            )
        if SPAWN_TOOL in names and not nest:
            raise ToolError(
                f"spawn_agent: maximum sub-agent depth ({cfg.max_agent_depth}) reached; "
                "the sub-agent cannot spawn its own"
            )
    limit = args.get("max_iterations") or cfg.max_iterations
    options: dict[str, Any] = {
        "mode": args.get("mode") or "react",
        "tools": [pool[n] for n in dict.fromkeys(names)],
        "max_iterations": min(limit, cfg.max_iterations),
        "cwd": None,  # the child's workspace is lent by run_subagent
        "workspace_files": None,
        "messages": None,
        "session_id": None,
        "on_event": None,
        "trace_attributes": None,
        "until_tool": None,
        "response_format": None,
        "examples": None,
        "assigns": dict(state.ctx.assigns),
        "hooks": _inherited_hooks(cfg.hooks),
    }
    if state.subagent_system_prompt is not None:
        options["system_prompt"] = state.subagent_system_prompt
    if cfg.subagent_provider is None:
        options["provider"] = state.provider
        options["model"] = state.model
    else:
        options["provider"] = cfg.subagent_provider
        options["model"] = None
        options["provider_opts"] = {}
    if cfg.max_budget_usd is not None:
        left = cfg.max_budget_usd - (state.budget.cost_usd or 0.0)
        if left <= 0:
            raise ToolError("spawn_agent: the run's max_budget_usd is spent; no sub-agent")
        options["max_budget_usd"] = left
    return options


def _workspace(state: State, subfolder: str | None) -> Workspace | None:
    """The child's workspace when it works in a subfolder (created, pinned by descriptor: see
    :meth:`Workspace.subfolder`); None for the shared workspace (run_subagent lends it)."""
    if not subfolder:
        return None
    try:
        return state.ctx.workspace.subfolder(subfolder)
    except ToolError as exc:
        raise ToolError(f"spawn_agent: {exc}") from None


def _inherited_hooks(hooks: dict[str, Any] | None) -> dict[str, Any] | None:
    """A child is never less guarded than its parent: it keeps the PreToolUse hooks."""
    if not hooks:
        return None
    kept = {k: v for k, v in hooks.items() if str(k) == HookEvent.PRE_TOOL_USE.value}
    return kept or None


def _roll_up(state: State, child: State, sub_id: str) -> None:
    budget = state.budget
    for record in child.budget.calls:
        budget.record(
            dataclasses.replace(
                record,
                index=len(budget.calls),
                purpose="subagent",
                agent=sub_id,
                iteration=state.iterations,
            )
        )


async def _stopped(
    state: State,
    sub_id: str,
    outcome: str,
    text: str | None,
    finish_reason: str,
    reason: str | None,
) -> None:
    await _fire(
        state,
        HookEvent.SUBAGENT_STOP,
        {"subagent_id": sub_id, "outcome": outcome, "result": text, "reason": reason,
         "finish_reason": finish_reason, "parent_session_id": state.session_id},
    )  # fmt: skip
    state.emit(SubagentResult(sub_id, text, finish_reason))


async def _fire(state: State, event: HookEvent, payload: dict[str, Any]) -> None:
    """Sub-agent hooks are notifications: their returns are ignored, as in ExAthena."""
    if state.hooks.has(event):
        await state.hooks.fire(event, payload)


def _render(value: Any) -> str | None:
    return None if value is None else render(value)
