"""The builtin tools: files (confined to the run's workspace, see
:mod:`harness.tools._file_tools` and :mod:`harness.tools._search_tools`), a safe calculator, a
per-run key-value store, ``finish`` and the
sandboxed ``shell`` (:mod:`harness.tools._shell`).

The calculator, key-value and ``finish`` tools live here; the file tools, the shell and
:class:`~harness.tools._builtin_base.BuiltinTool` are re-exported, so every builtin tool class can
be imported from this module.
"""

from __future__ import annotations

import json
from typing import Any

from harness.errors import ToolError
from harness.tools._base import Submit, ToolContext
from harness.tools._builtin_base import BuiltinTool, object_schema
from harness.tools._calculator import calculate
from harness.tools._file_tools import EditFileTool, ListDirTool, ReadFileTool, WriteFileTool
from harness.tools._search_tools import GlobTool, GrepTool
from harness.tools._shell import ShellTool

__all__ = [
    "BuiltinTool",
    "CalculatorTool",
    "EditFileTool",
    "FinishTool",
    "GlobTool",
    "GrepTool",
    "KVGetTool",
    "KVSetTool",
    "ListDirTool",
    "ReadFileTool",
    "ShellTool",
    "WriteFileTool",
]


class CalculatorTool(BuiltinTool):
    name = "calculator"
    description = (
        "Evaluate arithmetic: numbers, + - * / // % **, parentheses, sqrt abs round min max "
        "floor ceil log exp, and the constants pi and e."
    )
    parameters = object_schema(
        {"expression": {"type": "string", "description": "e.g. (2+3)*4"}}, "expression"
    )
    parallel_safe = True
    read_only = True

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        return calculate(self._str(self._check(args), "expression"))


class KVGetTool(BuiltinTool):
    name = "kv_get"
    description = "Read a value stored earlier in this run with kv_set."
    parameters = object_schema({"key": {"type": "string"}}, "key")
    parallel_safe = True
    read_only = True

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        key = self._str(self._check(args), "key")
        if key not in ctx.kv:
            keys = sorted(ctx.kv)
            known = ", ".join(repr(k) for k in keys[:20]) + (" ..." if len(keys) > 20 else "")
            raise ToolError(f"no value under key {key!r}; known keys: {known or '(none)'}")
        value = ctx.kv[key]
        return value if isinstance(value, str) else json.dumps(value, default=str)


class KVSetTool(BuiltinTool):
    name = "kv_set"
    description = "Store a value under a key for the rest of this run (read it with kv_get)."
    parameters = object_schema(
        {"key": {"type": "string"}, "value": {"description": "Any JSON value."}}, "key", "value"
    )

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        args = self._check(args)
        key = self._str(args, "key")
        if not key:
            raise ToolError("argument 'key' must not be empty")
        ctx.kv[key] = args["value"]
        return f"stored {key!r}"


class FinishTool(BuiltinTool):
    name = "finish"
    description = "End the run, submitting the deliverable (or a summary) as the final answer."
    parameters = object_schema(
        {
            "deliverable": {"description": "The final answer (any JSON value)."},
            "summary": {"type": "string", "description": "A short summary of the work."},
        }
    )

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        args = self._check(args)
        deliverable = args.get("deliverable")
        if args.get("summary") is not None:
            self._str(args, "summary")
        return Submit(deliverable if deliverable is not None else args.get("summary"))
