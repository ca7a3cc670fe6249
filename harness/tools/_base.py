"""The Tool protocol, the context a tool runs in, and the ``@tool`` decorator.

A tool is any object with ``name``, ``description``, ``parameters`` (a JSON schema),
``parallel_safe``, ``read_only`` and ``async run(args, ctx)``. ``run`` returns:

- a ``str`` (or any value: dicts and lists become JSON, the rest ``str()``) - the result text;
- a :class:`ToolOutput` - text plus an optional UI payload and optional state updates
  (``assigns``, merged into the run's ``assigns``);
- :class:`Submit` - end the run as ``submitted`` with a deliverable (the ``finish`` tool);
- :class:`HaltRun` - end the run as ``error_halted``.

Raising :class:`~harness.errors.ToolError` (or anything else) returns an error result to the model
and counts as a mistake; it never crashes the run.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, overload, runtime_checkable

from harness._sync import in_thread
from harness.core._halt import HaltRun
from harness.core._messages import UIPayload

if TYPE_CHECKING:
    from harness.events import Event
    from harness.tools._workspace import Workspace

__all__ = [
    "FunctionTool",
    "HaltRun",
    "Submit",
    "Tool",
    "ToolContext",
    "ToolOutput",
    "merge_assigns",
    "render",
    "tool",
]


@dataclass(slots=True, frozen=True)
class ToolOutput:
    """A tool result with an optional UI payload for hosts, and optional state updates:
    ``assigns`` is merged into the run's ``assigns`` when the call succeeds (nested dicts merge,
    other values replace), so later tool calls (``ctx.assigns``), hooks and ``Result.assigns``
    see it (Sagents' ``propagate_state``)."""

    content: str
    ui: UIPayload | None = None
    assigns: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        # A str subclass as the plain string (see render); anything else as a plain return value
        # is shown: an int made no row for its cell, None or a list ended the run as the
        # harness's internal error with a traceback (adversary round 14, part A).
        if type(self.content) is not str:
            object.__setattr__(self, "content", render(self.content))


@dataclass(slots=True, frozen=True)
class Submit:
    """Return from a tool to end the run as ``submitted`` with ``deliverable``."""

    deliverable: Any = None


@dataclass(slots=True)
class ToolContext:
    """What a tool sees of the run."""

    workspace: Workspace
    session_id: str
    phase: str = "default"
    tool_call_id: str = ""
    assigns: dict[str, Any] = field(default_factory=dict)
    kv: dict[str, Any] = field(default_factory=dict)
    emit: Callable[[Event], None] | None = None
    #: Starts a sub-agent (``spawn(args, ctx)``, used by ``spawn_agent``); None when the run
    #: cannot spawn. Set by the kernel, which owns nested runs.
    spawn: Callable[[dict[str, Any], ToolContext], Awaitable[Any]] | None = None

    @property
    def cwd(self) -> Any:
        return self.workspace.root


@runtime_checkable
class Tool(Protocol):
    name: str
    description: str
    parameters: dict[str, Any]
    parallel_safe: bool
    read_only: bool

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any: ...


def merge_assigns(target: dict[str, Any], updates: Mapping[str, Any]) -> None:
    """Merge a tool's state updates into the run's assigns, in place: where both sides hold a
    dict the merge recurses, otherwise the update wins (a list, even empty, replaces)."""
    for key, value in updates.items():
        old = target.get(key)
        if isinstance(old, dict) and isinstance(value, Mapping):
            merged = dict(old)
            merge_assigns(merged, value)
            target[key] = merged
        else:
            target[key] = value


def render(value: Any) -> str:
    """The text the model sees for a tool's plain return value. A ``str`` subclass is taken
    as the plain string it holds (``str``'s own method): its own ``__len__`` or ``encode`` may
    raise, and the kernel measured it later (an internal error that ended the run)."""
    kind = type(value)  # not isinstance, which asks the value's own __class__
    if issubclass(kind, str):
        return value if kind is str else str.__str__(value)
    if value is None:
        return ""
    if issubclass(kind, dict | list | tuple | int | float | bool):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


class FunctionTool:
    """A tool made from a Python function; arguments are validated against its signature."""

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        parallel_safe: bool = False,
        read_only: bool = False,
    ) -> None:
        from pydantic import ConfigDict, create_model

        if inspect.isasyncgenfunction(fn) or inspect.isgeneratorfunction(fn):
            from harness.errors import ConfigError  # the model got the generator's repr

            raise ConfigError(
                f"tool {getattr(fn, '__name__', fn)!r} is a generator function; a tool returns "
                "its result (return a string or a value, not yield)"
            )
        self.fn = fn
        self.name = name or fn.__name__
        self.description = description or inspect.cleandoc(fn.__doc__ or self.name)
        self.parallel_safe = parallel_safe
        self.read_only = read_only
        self._is_async = inspect.iscoroutinefunction(fn)
        self._wants_ctx = False
        fields: dict[str, Any] = {}
        hints = inspect.get_annotations(fn, eval_str=True)
        for pname, param in inspect.signature(fn).parameters.items():
            if pname == "ctx" or hints.get(pname) is ToolContext:
                self._wants_ctx = True
                continue
            annotation = hints.get(pname, Any)
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[pname] = (annotation, default)
        self._model = create_model(
            f"{self.name}_args", __config__=ConfigDict(extra="forbid"), **fields
        )
        schema = self._model.model_json_schema()
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        self.parameters: dict[str, Any] = schema

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        from pydantic import ValidationError

        try:
            parsed = self._model.model_validate(args)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
                for e in exc.errors()
            )
            from harness.errors import ToolError

            raise ToolError(f"invalid arguments for {self.name}: {problems}") from None
        kwargs = {k: getattr(parsed, k) for k in type(parsed).model_fields}
        if self._wants_ctx:
            kwargs["ctx"] = ctx
        if self._is_async:
            return await self.fn(**kwargs)
        # A plain function may block: run it in a thread of its own so timeouts and parallelism
        # hold, and one that never returns is left behind (in_thread).
        done = await in_thread(_called, self.fn, kwargs, name=self.name)
        if type(done) is _Raised:  # not isinstance: a value's own __class__ is its code
            raise done.exc  # here, in the run's own frames: see _called
        return done

    @property
    def _harness_owned(self) -> bool:
        """A plain function's ``GeneratorExit`` comes back from its thread as a value
        (:func:`_called`): the kernel awaits it directly; an async one's code is the user's."""
        return not self._is_async

    def __repr__(self) -> str:
        return f"FunctionTool({self.name!r})"


@overload
def tool(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    parallel_safe: bool = False,
    read_only: bool = False,
) -> FunctionTool: ...


@overload
def tool(
    fn: None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    parallel_safe: bool = False,
    read_only: bool = False,
) -> Callable[[Callable[..., Any]], FunctionTool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    parallel_safe: bool = False,
    read_only: bool = False,
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Make a tool from a function: ``@tool`` or ``@tool(parallel_safe=True)``.

    The JSON schema comes from the type hints, the description from the docstring. A parameter
    named ``ctx`` receives the :class:`ToolContext`.
    """

    def wrap(f: Callable[..., Any | Awaitable[Any]]) -> FunctionTool:
        return FunctionTool(
            f, name=name, description=description, parallel_safe=parallel_safe, read_only=read_only
        )

    return wrap(fn) if fn is not None else wrap


class _Raised:
    """A ``GeneratorExit`` a plain function raised on its worker thread, carried back."""

    def __init__(self, exc: GeneratorExit) -> None:
        self.exc = exc


def _called(fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """``fn(**kwargs)`` on a worker thread. A ``GeneratorExit`` it raises is handed back, not
    raised: asyncio throws a future's exception into the awaiting coroutine, and a thrown
    ``GeneratorExit`` closes every coroutine of the run at once (the run's own handling never
    saw it: a traceback out of ``harness.run``, the bench's executor and all its cells
    ended). Raised again in the awaiting frame, it ends the run as a tool's own
    ``BaseException`` does (``error_during_execution``)."""
    try:
        return fn(**kwargs)
    except GeneratorExit as exc:
        return _Raised(exc)
