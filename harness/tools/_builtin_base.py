"""The base class of the builtin tools: argument checking, and the helper that builds their
``parameters`` schemas."""

from __future__ import annotations

from typing import Any, ClassVar

from harness.errors import ToolError
from harness.tools._base import ToolContext

__all__ = ["BuiltinTool", "object_schema"]


def object_schema(props: dict[str, Any], *required: str) -> dict[str, Any]:
    """A JSON schema for an object with ``props``, the ``required`` ones, and nothing else."""
    return {"type": "object", "properties": props, "required": list(required),
            "additionalProperties": False}  # fmt: skip


class BuiltinTool:
    """Shared argument checking; subclasses set the class attributes and ``run``."""

    #: The harness's own code: the kernel awaits ``run`` directly (kernel._isolated.owned).
    _harness_owned: ClassVar[bool] = True

    name: str = ""
    description: str = ""
    parameters: dict[str, Any] = object_schema({})
    parallel_safe: bool = False
    read_only: bool = False

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        raise NotImplementedError

    def _check(self, args: Any) -> dict[str, Any]:
        if not isinstance(args, dict):
            raise ToolError(f"{self.name}: arguments must be an object, got {type(args).__name__}")
        props = self.parameters["properties"]
        for key in args:
            if key not in props:
                raise ToolError(f"unexpected argument {key!r} (arguments: {', '.join(props)})")
        for key in self.parameters["required"]:
            # null counts as missing, except for "any JSON value" properties (no "type")
            if key not in args or (args[key] is None and "type" in props[key]):
                raise ToolError(f"missing required argument {key!r}")
        return args

    def _str(self, args: dict[str, Any], key: str, default: str | None = None) -> str:
        value = args.get(key)
        if value is None and default is not None:
            return default
        if not isinstance(value, str):
            raise ToolError(f"argument {key!r} must be a string, got {type(value).__name__}")
        return value

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
