"""harness.tools: the Tool protocol and ``@tool``, the workspace sandbox, and the builtin tools."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness._exports import lazy_exports

if TYPE_CHECKING:
    from harness.tools._base import Submit as Submit
    from harness.tools._base import Tool as Tool
    from harness.tools._base import ToolContext as ToolContext
    from harness.tools._base import ToolOutput as ToolOutput
    from harness.tools._base import tool as tool
    from harness.tools._builtins import CalculatorTool as CalculatorTool
    from harness.tools._builtins import EditFileTool as EditFileTool
    from harness.tools._builtins import FinishTool as FinishTool
    from harness.tools._builtins import GlobTool as GlobTool
    from harness.tools._builtins import GrepTool as GrepTool
    from harness.tools._builtins import KVGetTool as KVGetTool
    from harness.tools._builtins import KVSetTool as KVSetTool
    from harness.tools._builtins import ListDirTool as ListDirTool
    from harness.tools._builtins import ReadFileTool as ReadFileTool
    from harness.tools._builtins import WriteFileTool as WriteFileTool
    from harness.tools._registry import BUILTIN_TOOLS as BUILTIN_TOOLS
    from harness.tools._registry import TOOLS as TOOLS
    from harness.tools._registry import builtin_names as builtin_names
    from harness.tools._registry import resolve_tools as resolve_tools
    from harness.tools._sandbox import Limits as Limits
    from harness.tools._sandbox import sandbox_problem as sandbox_problem
    from harness.tools._shell import ShellTool as ShellTool
    from harness.tools._workspace import Workspace as Workspace

#: Each private module and the public names it exports here (``__all__`` derives from it).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "harness.tools._base": ("Submit", "Tool", "ToolContext", "ToolOutput", "tool"),
    "harness.tools._builtins": (
        "CalculatorTool",
        "EditFileTool",
        "FinishTool",
        "GlobTool",
        "GrepTool",
        "KVGetTool",
        "KVSetTool",
        "ListDirTool",
        "ReadFileTool",
        "WriteFileTool",
    ),
    "harness.tools._registry": ("BUILTIN_TOOLS", "TOOLS", "builtin_names", "resolve_tools"),
    "harness.tools._sandbox": ("Limits", "sandbox_problem"),
    "harness.tools._shell": ("ShellTool",),
    "harness.tools._workspace": ("Workspace",),
}
__all__, __getattr__ = lazy_exports(__name__, _EXPORTS)
