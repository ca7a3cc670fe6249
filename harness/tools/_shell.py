"""The ``shell`` builtin tool (ExAthena's ``bash``): run a command in the run's workspace, inside
the bubblewrap sandbox of :mod:`harness.tools._sandbox`.

Arguments: ``command`` (run with ``sh -c``) and an optional ``timeout_s`` (default 30, at most
``max_timeout_s``, 120). The result is the exit status on the first line, then the output
(stdout and stderr together, capped). A command that fails (non-zero exit, timeout, a
per-process limit hit) is a normal result the model can read, not a tool error. A command killed
for a cap of the whole command (its processes' memory together, or the disk it fills:
``killed: memory cap of 1024 MiB for the command's processes (cgroup v1 memory controller)``)
is an error result naming the cap, with the output so far; the run goes on. A sandbox that
cannot run here is a tool error saying why (the tool never runs commands unsandboxed unless
built with ``sandbox="none"``, which is for trusted use only and unsafe).

The tool changes files, so it is not read-only: the plan phase refuses it and the other
permission phases apply as to any writing tool.
"""

from __future__ import annotations

import os
from typing import Any

from harness.errors import ToolError
from harness.tools._base import ToolContext
from harness.tools._builtin_base import BuiltinTool, object_schema
from harness.tools._sandbox import Limits, SandboxKind, run_command

__all__ = ["ShellTool"]

DEFAULT_TIMEOUT_S = 30.0
MAX_TIMEOUT_S = 120.0


class ShellTool(BuiltinTool):
    name = "shell"
    description = (
        "Run a shell command (sh -c) in the task's workspace folder, in a sandbox without "
        "network. Returns the exit code and the output. Example: python -m pytest -q"
    )
    parameters = object_schema(
        {
            "command": {"type": "string", "description": "The command line to run."},
            "timeout_s": {
                "type": "number",
                "description": f"Seconds before the command is killed (default "
                f"{DEFAULT_TIMEOUT_S:g}, at most {MAX_TIMEOUT_S:g}).",
            },
        },
        "command",
    )

    def __init__(
        self,
        *,
        sandbox: SandboxKind = "bwrap",
        limits: Limits | None = None,
        max_timeout_s: float = MAX_TIMEOUT_S,
        bwrap: str = "bwrap",
    ) -> None:
        if sandbox not in ("bwrap", "none"):
            raise ToolError(f"shell: sandbox must be 'bwrap' or 'none' (unsafe), got {sandbox!r}")
        self.sandbox: SandboxKind = sandbox
        self.limits = limits or Limits()
        self.max_timeout_s = max_timeout_s
        self.bwrap = bwrap

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        args = self._check(args)
        command = self._str(args, "command")
        if not command.strip():
            raise ToolError("argument 'command' must not be empty")
        timeout = args.get("timeout_s")
        if timeout is None:
            timeout = min(DEFAULT_TIMEOUT_S, self.max_timeout_s)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise ToolError(f"argument 'timeout_s' must be a positive number, got {timeout!r}")
        # The sandbox binds the folder held here, never its name (a sibling's shell may swap a
        # sub-agent's folder for a symlink to the host meanwhile).
        held = ctx.workspace.open_folder("shell") if self.sandbox == "bwrap" else None
        try:
            done = await run_command(
                command,
                ctx.workspace.root,
                timeout_s=min(float(timeout), self.max_timeout_s),
                limits=self.limits,
                sandbox=self.sandbox,
                bwrap=self.bwrap,
                workspace_fd=held,
            )
        finally:
            if held is not None:
                os.close(held)
        output = done.output.rstrip("\n")
        text = f"{done.describe()}\n{output}" if output else done.describe()
        if done.stopped is not None:
            raise ToolError(text)
        return text

    def __repr__(self) -> str:
        return f"ShellTool(sandbox={self.sandbox!r})"
