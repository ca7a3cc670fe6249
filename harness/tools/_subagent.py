"""``spawn_agent``: delegate a sub-task to a nested run (a sub-agent) and get its final answer.

The tool only checks its arguments and hands them to ``ctx.spawn``, which the kernel provides
(:mod:`harness.kernel._subagents` runs the child loop, rolls its usage into the parent and emits
the events); tools sit below the kernel and never import it. Not part of ``tools="all"``: name it.
"""

from __future__ import annotations

from typing import Any

from harness.errors import ToolError
from harness.tools._base import ToolContext
from harness.tools._builtin_base import BuiltinTool, object_schema

__all__ = ["SpawnAgentTool"]


class SpawnAgentTool(BuiltinTool):
    name = "spawn_agent"
    description = (
        "Delegate a self-contained sub-task to a helper agent that works on its own and returns "
        "its final answer. Give it everything it needs in the prompt: it does not see this "
        "conversation."
    )
    parameters = object_schema(
        {
            "prompt": {"type": "string", "description": "The complete brief for the helper."},
            "mode": {
                "type": "string",
                "description": "Agent mode of the helper (default react).",
            },
            "tools": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Names of the tools the helper may use (a subset of yours).",
            },
            "max_iterations": {"type": "integer", "minimum": 1},
            "subfolder": {
                "type": "string",
                "description": "Confine the helper to this folder of the workspace.",
            },
            "todo": {
                "type": "integer",
                "minimum": 1,
                "description": "The number of the todo item this delegates, if any.",
            },
        },
        "prompt",
    )
    # Sub-agents run concurrently when the model asks for several at once.
    parallel_safe = True
    read_only = False

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        args = self._check(args)
        prompt = self._str(args, "prompt").strip()
        if not prompt:
            raise ToolError("argument 'prompt' must not be empty")
        if args.get("mode") is not None:
            self._str(args, "mode")
        if args.get("subfolder") is not None:
            self._str(args, "subfolder")
        tools = args.get("tools")
        if tools is not None and (
            not isinstance(tools, list) or not all(isinstance(t, str) for t in tools)
        ):
            raise ToolError("argument 'tools' must be a list of tool names")
        limit = args.get("max_iterations")
        if limit is not None and (
            not isinstance(limit, int) or isinstance(limit, bool) or limit < 1
        ):
            raise ToolError("argument 'max_iterations' must be an integer >= 1")
        todo = args.get("todo")
        if todo is not None and (not isinstance(todo, int) or isinstance(todo, bool) or todo < 1):
            raise ToolError("argument 'todo' must be the item's number (an integer >= 1)")
        if ctx.spawn is None:
            raise ToolError("spawn_agent is not available in this run")
        return await ctx.spawn({**args, "prompt": prompt}, ctx)
