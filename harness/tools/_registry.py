"""Builtin tool lookup and the resolution of a run's ``tools=`` option into tool objects."""

from __future__ import annotations

import difflib
import inspect
import re
from collections.abc import Sequence
from typing import Any

from harness._plugins import Registry
from harness.errors import ConfigError
from harness.tools._base import Tool
from harness.tools._builtins import (
    BuiltinTool,
    CalculatorTool,
    EditFileTool,
    FinishTool,
    GlobTool,
    GrepTool,
    KVGetTool,
    KVSetTool,
    ListDirTool,
    ReadFileTool,
    WriteFileTool,
)
from harness.tools._shell import ShellTool
from harness.tools._subagent import SpawnAgentTool
from harness.tools._todos import TodoWriteTool

__all__ = ["BUILTIN_TOOLS", "OPT_IN_TOOLS", "TOOLS", "builtin_names", "resolve_tools"]

#: Builtin tool name -> class (instantiate with no arguments).
BUILTIN_TOOLS: dict[str, type[BuiltinTool]] = {
    cls.name: cls
    for cls in (
        ReadFileTool,
        WriteFileTool,
        EditFileTool,
        ListDirTool,
        GlobTool,
        GrepTool,
        CalculatorTool,
        KVGetTool,
        KVSetTool,
        FinishTool,
        ShellTool,
        SpawnAgentTool,
        TodoWriteTool,
    )
}


def _tool_object(obj: Any, spec: str) -> Tool:
    """A registered tool: a Tool object, or a class / factory that makes one with no arguments."""
    if isinstance(obj, type) or (callable(obj) and not isinstance(obj, Tool)):
        try:
            obj = obj()
        except TypeError as exc:
            raise ConfigError(f"tool {spec!r}: cannot make it with no arguments: {exc}") from None
    return _check_tool(obj, f"tool {spec!r}")


#: Tools by name: the built-ins, tools registered in code and the entry points of the group
#: ``harness.tools`` (a Tool object, or a class or factory called with no arguments); a
#: ``"package.module:attr"`` reference works wherever a tool name does.
TOOLS: Registry[Tool] = Registry(
    "tool",
    "harness.tools",
    {name: f"{cls.__module__}:{cls.__qualname__}" for name, cls in BUILTIN_TOOLS.items()},
    check=_tool_object,
)

#: Builtins that ``tools="all"`` leaves out (they change what a run is): name them to use them.
OPT_IN_TOOLS = frozenset({"spawn_agent", "todo_write"})

# What provider APIs accept as a function name.
_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_PROTOCOL = (
    "a tool needs name (str), description (str), parameters (a JSON-schema dict), "
    "parallel_safe (bool), read_only (bool) and `async def run(self, args, ctx)`; "
    "use @harness.tool to make one from a function"
)


def builtin_names() -> list[str]:
    """The builtin tool names, sorted."""
    return sorted(BUILTIN_TOOLS)


def resolve_tools(spec: str | Sequence[Tool | str] | None) -> list[Tool]:
    """Turn a ``tools=`` option into tool objects.

    ``None`` -> no tools; ``"all"`` -> one instance of every builtin but the opt-in ones
    (:data:`OPT_IN_TOOLS`); a list may mix tool objects,
    builtin names and ``"all"``. Raises :class:`ConfigError` on an unknown name, an object that
    is not a tool, or two tools with the same name.
    """
    if spec is None:
        return []
    if isinstance(spec, str):
        if spec == "all":
            return [cls() for n, cls in BUILTIN_TOOLS.items() if n not in OPT_IN_TOOLS]
        hint = f"; for the single builtin, write tools=[{spec!r}]" if spec in BUILTIN_TOOLS else ""
        raise ConfigError(
            f"tools: expected None, 'all' or a list of tools and builtin names, "
            f"got the string {spec!r}{hint}"
        )
    given: Any = spec  # checked at runtime: callers pass anything
    if not isinstance(given, Sequence) or isinstance(given, bytes | bytearray):
        raise ConfigError(
            f"tools: expected None, 'all' or a list of tools and builtin names, "
            f"got {type(given).__name__}"
        )
    tools: list[Tool] = []
    for i, item in enumerate(given):
        if isinstance(item, str):
            tools.extend(_builtin(item) if item != "all" else resolve_tools("all"))
        else:
            tools.append(_check_tool(item, f"tools[{i}]"))
    seen: set[str] = set()
    for t in tools:
        if t.name in seen:
            raise ConfigError(f"tools: duplicate tool name {t.name!r}; tool names must be unique")
        seen.add(t.name)
    return tools


def _builtin(name: str) -> list[Tool]:
    cls = BUILTIN_TOOLS.get(name)
    if cls is not None:
        return [cls()]
    if name in TOOLS:  # a plug-in tool (entry point, registered in code) or module:attr
        return [TOOLS.get(name)]
    close = difflib.get_close_matches(name, TOOLS.names(), n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    plugins = [n for n in TOOLS.names() if n not in BUILTIN_TOOLS]
    extra = f"; plug-ins: {', '.join(plugins)}" if plugins else ""
    raise ConfigError(
        f"tools: unknown tool {name!r}; builtins are: {', '.join(builtin_names())}{extra}{hint}"
    )


def _check_tool(item: Any, where: str) -> Tool:
    kind = type(item).__name__
    if isinstance(item, type):
        raise ConfigError(
            f"{where}: got the class {item.__name__}, not a tool object; "
            f"pass an instance such as {item.__name__}()"
        )
    if inspect.isfunction(item) or inspect.isbuiltin(item):
        raise ConfigError(f"{where}: got the plain function {item.__name__!r}; {_PROTOCOL}")
    fields = ("name", "description", "parameters", "parallel_safe", "read_only", "run")
    attrs = {a: getattr(item, a, None) for a in fields}
    if not isinstance(item, Tool):
        missing = [a for a in fields if not hasattr(item, a)]
        raise ConfigError(
            f"{where}: {kind} object is not a tool (missing {', '.join(missing)}); {_PROTOCOL}"
        )
    problems = []
    name, params, run = attrs["name"], attrs["parameters"], attrs["run"]
    if not isinstance(name, str) or not _NAME_RE.match(name):
        problems.append(f"name {name!r} must match {_NAME_RE.pattern}")
    if not isinstance(attrs["description"], str):
        problems.append("description must be a str")
    if not isinstance(params, dict) or params.get("type") != "object":
        problems.append('parameters must be a JSON-schema dict with "type": "object"')
    for flag in ("parallel_safe", "read_only"):
        if not isinstance(attrs[flag], bool):
            problems.append(f"{flag} must be a bool")
    if not callable(run) or (
        (inspect.isfunction(run) or inspect.ismethod(run)) and not inspect.iscoroutinefunction(run)
    ):
        problems.append("run must be an async method: `async def run(self, args, ctx)`")
    if problems:
        raise ConfigError(f"{where} ({kind}): {'; '.join(problems)}")
    return item
