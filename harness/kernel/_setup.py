"""Assembling a run's :class:`~harness.kernel._state.State` from resolved parts.

The facade (:func:`harness.api.build_state`) resolves the mode, the tools and the provider; the
kernel checks the rest of the configuration (``until_tool``, hooks, the first messages, the
workspace) and builds the state. So the kernel never imports a concrete mode or the provider and
tool registries. Both steps raise :class:`~harness.ConfigError` before anything runs.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness._plugins import described
from harness.core._messages import Message, message_from_dict
from harness.errors import ConfigError
from harness.kernel._calls import MAX_ARGUMENT_DEPTH, _deeper_than
from harness.kernel._hooks import Hooks
from harness.kernel._options import RunConfig
from harness.kernel._permissions import Permissions, Phase
from harness.kernel._state import Mode, State, Subscriber
from harness.kernel._subagents import run_subagent
from harness.kernel._user_turns import PendingTurn, TurnLog
from harness.providers._base import Capabilities, Provider, ToolSpec
from harness.tools._base import Tool, ToolContext
from harness.tools._workspace import Workspace

__all__ = ["RunInputs", "check_inputs", "new_state"]


@dataclass(slots=True, frozen=True)
class RunInputs:
    """The checked, provider-independent parts of a run."""

    tools: dict[str, Tool]
    hooks: Hooks
    messages: list[Message]
    workspace: Workspace


def check_inputs(prompt: str | None, config: RunConfig, tools: Sequence[Tool]) -> RunInputs:
    """Check ``until_tool`` against the run's tools, the hooks and the first messages (``messages``
    then ``prompt``), and open the workspace; raises ConfigError."""
    by_name = {t.name: t for t in tools}
    for name in config.until_tool or ():
        if name not in by_name:
            raise ConfigError(
                f"until_tool: tool {name!r} is not among the run's tools "
                f"({', '.join(sorted(by_name)) or 'none'})"
            )
    hooks = Hooks(config.hooks)
    messages: list[Message] = []
    for i, m in enumerate(config.messages or ()):
        try:
            messages.append(message_from_dict(m, where=f"messages[{i}]"))
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        for j, call in enumerate(messages[-1].tool_calls or ()):
            if _deeper_than(call.arguments, MAX_ARGUMENT_DEPTH):  # as a model's are refused
                raise ConfigError(  # (the run's internal error: RecursionError; stop 48)
                    f"messages[{i}].tool_calls[{j}].arguments: nested deeper than "
                    f"{MAX_ARGUMENT_DEPTH} levels; give flatter arguments"
                )
    if prompt is not None:
        if not isinstance(prompt, str):
            raise ConfigError(f"prompt: expected a string, got {type(prompt).__name__}")
        messages.append(Message.user(prompt))
    if not messages:
        raise ConfigError("prompt: give a prompt or a non-empty messages list")
    workspace = Workspace(config.cwd, files=config.workspace_files)
    return RunInputs(by_name, hooks, messages, workspace)


def new_state(
    config: RunConfig,
    inputs: RunInputs,
    *,
    mode: Mode,
    provider: Provider,
    model: str | None,
    subscribers: Sequence[Subscriber] = (),
    turns: Sequence[PendingTurn] = (),
) -> State:
    """The State of a new run, from the checked inputs and the resolved mode and provider;
    ``turns`` are the follow-up user turns, checked by
    :func:`~harness.kernel._conversation.plan_turns`."""
    pending = list(turns)
    session_id = config.session_id or secrets.token_urlsafe(12)
    permissions = Permissions(
        phase=Phase(config.phase),
        allowed_tools=frozenset(config.allowed_tools) if config.allowed_tools is not None else None,
        disallowed_tools=frozenset(config.disallowed_tools or ()),
        can_use_tool=config.can_use_tool,
    )
    tools = inputs.tools
    ctx = ToolContext(inputs.workspace, session_id, config.phase, "", dict(config.assigns), {})
    state = State(
        config=config,
        provider=provider,
        mode=mode,
        tools=tools,
        tool_specs=[ToolSpec(t.name, t.description, t.parameters) for t in tools.values()],
        hooks=inputs.hooks,
        permissions=permissions,
        ctx=ctx,
        session_id=session_id,
        model=model,
        provider_name=_read(provider, "name", "the provider", str),
        mode_name=_read(mode, "name", "the mode", str),
        capabilities=_capabilities(provider),
        messages=inputs.messages,
        subscribers=tuple(subscribers),
        turn_log=TurnLog(pending, conversation=bool(pending)),
    )
    first = next((m.content for m in reversed(inputs.messages) if m.role == "user"), "")
    state.turn_log.start(first)
    state.ctx.emit = state.emit

    async def spawn(args: dict[str, Any], call_ctx: ToolContext) -> Any:
        return await run_subagent(state, args, call_ctx)

    state.ctx.spawn = spawn
    return state


def _read(obj: object, name: str, what: str, kind: type = object) -> Any:
    """``obj.name``, read once as the run is made: a plug-in's attribute is its code, and read
    wherever the kernel needed it (``to_result`` after the run's last step) one that raised
    left ``harness.run`` with no Result and no ``Done`` (adversary round 21, part A)."""
    try:
        value = getattr(obj, name)
        flag = bool(value) if kind is bool else None  # its __bool__ is its code too
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # a GeneratorExit of its own too
        # described: an exception whose __str__ raises was raised instead (round 22, part A)
        raise ConfigError(f"{what}'s {name} cannot be read: {described(exc)}") from None
    if kind is bool:
        return flag
    if not isinstance(value, kind):
        raise ConfigError(f"{what}'s {name} must be a {kind.__name__}, got {type(value).__name__}")
    return value


def _capabilities(provider: Provider) -> Capabilities:
    """A copy of the provider's capabilities, each read once (see :func:`_read`)."""
    caps = _read(provider, "capabilities", "the provider")
    what = "the provider's capabilities"
    fields = ("native_tool_calls", "streaming", "json_mode", "structured_output")
    flags = {f: _read(caps, f, what, bool) for f in fields}
    window = _read(caps, "context_window", what)
    if window is not None and (type(window) is not int or window < 0):
        raise ConfigError(
            f"{what}.context_window must be a whole number of tokens or None, got {window!r}"
        )
    return Capabilities(**flags, context_window=window)
