"""Hooks: user callbacks at fixed points of the loop (port of ``ExAthena.Hooks``).

``hooks={"PreToolUse": [{"matcher": "write|edit", "hooks": [fn]}], "Stop": [fn]}``. A callback is
``fn(payload: dict, tool_use_id: str | None)`` (sync or async) and returns ``None`` or a decision:
:class:`Deny` (PreToolUse), :class:`HaltRun` (any hook that can halt), :class:`Inject`
(UserPromptSubmit, PreIteration, ChatParams), :class:`Transform` (UserPromptSubmit) or
:class:`Augment` (PostToolUse). The first halt wins; injects accumulate in order; the last
transform wins; augments are joined. A hook that raises halts the run as ``error_halted`` with the
exception in ``halted_reason``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from harness._plugins import described, shown_value
from harness.core._halt import HaltRun
from harness.core._messages import Message, message_from_dict
from harness.errors import ConfigError
from harness.kernel._isolated import called, unawaited
from harness.kernel._told import told

__all__ = [
    "Augment",
    "Deny",
    "HaltRun",
    "HookEvent",
    "HookMatcher",
    "HookOutcome",
    "Hooks",
    "Inject",
    "Transform",
]


class HookEvent(StrEnum):
    SESSION_START = "SessionStart"
    USER_PROMPT_SUBMIT = "UserPromptSubmit"
    PRE_ITERATION = "PreIteration"
    CHAT_PARAMS = "ChatParams"
    PRE_TOOL_USE = "PreToolUse"
    POST_TOOL_USE = "PostToolUse"
    POST_TOOL_USE_FAILURE = "PostToolUseFailure"
    PERMISSION_DENIED = "PermissionDenied"
    PRE_COMPACT = "PreCompact"
    POST_COMPACT = "PostCompact"
    SUBAGENT_START = "SubagentStart"
    SUBAGENT_STOP = "SubagentStop"
    STOP = "Stop"
    STOP_FAILURE = "StopFailure"
    SESSION_END = "SessionEnd"


_TOOL_EVENTS = frozenset(
    {
        HookEvent.PRE_TOOL_USE,
        HookEvent.POST_TOOL_USE,
        HookEvent.POST_TOOL_USE_FAILURE,
        HookEvent.PERMISSION_DENIED,
    }
)


@dataclass(slots=True, frozen=True)
class Deny:
    reason: str


@dataclass(slots=True, frozen=True)
class Inject:
    """Messages added to the conversation: a list, or one text, :class:`Message` or dict."""

    messages: Sequence[Message | dict[str, Any] | str] | Message | dict[str, Any] | str


@dataclass(slots=True, frozen=True)
class Transform:
    prompt: str


@dataclass(slots=True, frozen=True)
class Augment:
    text: str


HookFn = Callable[[dict[str, Any], str | None], Any]


@dataclass(slots=True, frozen=True)
class HookMatcher:
    """Callbacks that fire only for tools whose name matches ``matcher`` (``re.search``)."""

    matcher: str | re.Pattern[str] | None
    hooks: Sequence[HookFn] | HookFn


@dataclass(slots=True)
class HookOutcome:
    halt: str | None = None
    deny: str | None = None
    inject: list[Message] = field(default_factory=list)
    transform: str | None = None
    augment: list[str] = field(default_factory=list)


_EMPTY = HookOutcome()


@dataclass(slots=True, frozen=True)
class _Entry:
    pattern: re.Pattern[str] | None
    fn: HookFn


class Hooks:
    """A validated hook table."""

    __slots__ = ("_table",)

    def __init__(self, table: Mapping[str, Any] | None = None) -> None:
        self._table: dict[HookEvent, list[_Entry]] = {}
        for key, entries in (table or {}).items():
            event = _event(key)
            if not isinstance(entries, list | tuple):
                entries = [entries]
            self._table[event] = [e for item in entries for e in _entries(event, item)]

    def __bool__(self) -> bool:
        return bool(self._table)

    def has(self, event: HookEvent) -> bool:
        return event in self._table

    async def fire(
        self,
        event: HookEvent,
        payload: dict[str, Any],
        *,
        tool_name: str | None = None,
        tool_use_id: str | None = None,
    ) -> HookOutcome:
        entries = self._table.get(event)
        if not entries:
            return _EMPTY
        outcome = HookOutcome()
        hook_id = tool_use_id if tool_use_id is not None else payload.get("session_id")
        for entry in entries:
            if entry.pattern is not None and (
                tool_name is None or entry.pattern.search(tool_name) is None
            ):
                continue
            done, value = await called(entry.fn, payload, hook_id)
            if not done:  # a crashing hook halts the run, never crashes it
                outcome.halt = f"hook_crashed: {event.value}: {await told(value)}"
                return outcome
            # Read as a plug-in's call: a subclass's property or an iterable raising its own
            # BaseException, or cancelling the run's task, is the hook's crash
            read, why = await called(_taken, value, outcome)
            if not read:
                why = f"its answer cannot be read: {await told(why)}"
            if why is not None:
                outcome.halt = f"hook_crashed: {event.value}: {why}"
                return outcome
            if outcome.halt is not None:
                return outcome
        return outcome


_TEXT_FIELDS = ((HaltRun, "reason"), (Deny, "reason"), (Transform, "prompt"), (Augment, "text"))


def _taken(value: Any, outcome: HookOutcome) -> str | None:
    """Take a hook's answer into ``outcome``; why it cannot be taken (the hook's crash): an
    unsupported value, a payload that is not text (``Augment(123)``, ``Transform(5)`` ended
    the run ``internal error: TypeError``, the 5 kept as the user's message), messages that
    cannot be read (adversary round 14, part A)."""
    for cls, name in _TEXT_FIELDS:
        if isinstance(value, cls):
            held = getattr(value, name)
            if not isinstance(held, str):
                return f"{type(value).__name__}'s {name} is {shown_value(held)}, not a string"
            if type(held) is not str:  # a str subclass whose own len or format may raise
                value = replace(value, **{name: str.__str__(held)})  # type: ignore[arg-type]
    match value:
        case None | True:
            pass
        case HaltRun(reason=r):
            outcome.halt = r
        case Deny(reason=r):
            if outcome.deny is None:
                outcome.deny = r
        case Inject(messages=given):
            msgs: Any = given  # whatever the hook put there
            if isinstance(msgs, str | Message | Mapping):  # one message, not its characters
                msgs = [msgs]
            elif isinstance(msgs, bytes | bytearray):
                return f"Inject's messages is {shown_value(msgs)}, not a list of messages"
            try:
                outcome.inject.extend(
                    Message.user(str.__str__(m)) if isinstance(m, str) else message_from_dict(m)
                    for m in msgs
                )
            except Exception as exc:
                return f"Inject's messages cannot be read: {described(exc)}"
        case Transform(prompt=p):
            outcome.transform = p
        case Augment(text=t):
            outcome.augment.append(t)
        case _:
            unawaited(value)  # an async hook answering a coroutine: closed, not run
            return (
                f"unsupported return value {shown_value(value)} "
                "(return None, Deny, HaltRun, Inject, Transform or Augment)"
            )
    return None


def _event(key: str | HookEvent) -> HookEvent:
    try:
        return HookEvent(key)
    except ValueError:
        import difflib

        names = [e.value for e in HookEvent]
        close = difflib.get_close_matches(str(key), names, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigError(
            f"hooks: unknown hook event {key!r}{hint} Known events: {', '.join(names)}"
        ) from None


def _entries(event: HookEvent, item: Any) -> list[_Entry]:
    if isinstance(item, Mapping):
        unknown = set(item) - {"matcher", "hooks"}
        if unknown:
            raise ConfigError(f"hooks[{event.value!r}]: unknown keys {sorted(unknown)}")
        item = HookMatcher(item.get("matcher"), item.get("hooks") or [])
    if isinstance(item, HookMatcher):
        pattern = None
        if item.matcher is not None:
            compiled = isinstance(item.matcher, re.Pattern) and type(item.matcher.pattern) is str
            if not isinstance(item.matcher, str) and not compiled:  # re.compile takes both
                raise ConfigError(
                    f"hooks[{event.value!r}]: matcher must be a string (a regex over tool "
                    f"names), got {type(item.matcher).__name__}"
                )
            if event not in _TOOL_EVENTS:
                raise ConfigError(
                    f"hooks[{event.value!r}]: a matcher only applies to tool hooks "
                    f"({', '.join(e.value for e in _TOOL_EVENTS)})"
                )
            try:
                pattern = re.compile(item.matcher)
            except re.error as exc:
                raise ConfigError(
                    f"hooks[{event.value!r}]: matcher {item.matcher!r} is not a valid regex: {exc}"
                ) from None
        hooks: Any = item.hooks  # a list, any other iterable of callables, or one callable
        one = callable(hooks) or isinstance(hooks, str | bytes | Mapping)
        fns = [hooks] if one or not hasattr(hooks, "__iter__") else list(hooks)
        return [_entry(event, fn, pattern) for fn in fns]
    return [_entry(event, item, None)]


def _entry(event: HookEvent, fn: Any, pattern: re.Pattern[str] | None) -> _Entry:
    if not callable(fn):
        raise ConfigError(
            f"hooks[{event.value!r}]: expected a callable fn(payload, tool_use_id), "
            f"got {type(fn).__name__}"
        )
    return _Entry(pattern, fn)
