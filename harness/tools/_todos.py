"""``todo_write``: the run's todo list, replaced whole on every call (ExAthena's TodoWrite).

The list goes into the run's ``assigns["todos"]`` as a state update (``ToolOutput.assigns``), so
later tool calls, hooks, the ``orchestrate`` mode and ``Result.assigns`` see it, and comes back
as a ``todos`` UI payload. Not part of ``tools="all"``: name it.
"""

from __future__ import annotations

from typing import Any

from harness.core._messages import UIPayload
from harness.errors import ToolError
from harness.tools._base import ToolContext, ToolOutput
from harness.tools._builtin_base import BuiltinTool, object_schema

__all__ = ["TODO_STATUSES", "TodoWriteTool", "render_todos"]

TODO_STATUSES = ("pending", "in_progress", "completed")
_MARK = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}


def render_todos(todos: list[dict[str, str]]) -> str:
    """The list as the model sees it: one ``[x] 2. content`` line per item."""
    if not todos:
        return "(the todo list is empty)"
    return "\n".join(
        f"{_MARK[t['status']]} {i}. {t['content']}" for i, t in enumerate(todos, start=1)
    )


class TodoWriteTool(BuiltinTool):
    name = "todo_write"
    description = (
        "Replace the todo list with the given items. Each item has a 'content' (one step, "
        "stated so that someone else could do it) and a 'status': pending, in_progress or "
        "completed. Send the whole list every time."
    )
    parameters = object_schema(
        {
            "todos": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string"},
                        "status": {"type": "string", "enum": list(TODO_STATUSES)},
                    },
                    "required": ["content"],
                },
            }
        },
        "todos",
    )
    parallel_safe = False
    read_only = False

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        raw = self._check(args)["todos"]
        if not isinstance(raw, list):
            raise ToolError("argument 'todos' must be a list of {content, status} items")
        todos: list[dict[str, str]] = []
        for i, item in enumerate(raw):
            if isinstance(item, str):  # small models often send bare strings
                item = {"content": item}
            if not isinstance(item, dict):
                raise ToolError(f"todos[{i}] must be an object with 'content' and 'status'")
            content = item.get("content")
            status = item.get("status") or "pending"
            if not isinstance(content, str) or not content.strip():
                raise ToolError(f"todos[{i}].content must be a non-empty string")
            if status not in TODO_STATUSES:
                raise ToolError(
                    f"todos[{i}].status must be one of {', '.join(TODO_STATUSES)}, got {status!r}"
                )
            todos.append({"content": content.strip(), "status": status})
        return ToolOutput(
            "Todo list updated:\n" + render_todos(todos),
            UIPayload("todos", todos),
            assigns={"todos": todos},
        )
