"""The ``run_python`` tool: run a Python program in the bubblewrap sandbox of
:mod:`harness.tools._sandbox`, in a fresh empty folder of its own (not the run's workspace), so
code tasks (the ``humaneval`` source) can test their code before answering. It never sees a
task's hidden tests: the folder holds only the program.

Argument: ``code`` (the program, run as ``python main.py`` in ``/workspace``). The result is the
outcome on the first line (``exit code 0``, ``exit code 1``, ``killed by SIGKILL``, or ``timed
out after the 10 s limit; the program was killed``: the limit, never a measured time, so
replays are identical), then the output (stdout and stderr together, capped at
:data:`OUTPUT_BYTES`: head and tail) or ``(no output)``. The running Python's folders in the
output (a traceback through the standard library) read ``<python>``, so the text does not
depend on where the harness's interpreter is installed. A program that fails is a normal
result; a cap of the whole command (memory, disk) is an error result naming it; a sandbox that
cannot run here is a tool error (the tool never runs code unsandboxed).

:func:`run_python_files` runs any program this way (the ``humaneval`` grader uses it).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from harness._files import remove_tree
from harness.errors import ToolError
from harness.tools._base import ToolContext
from harness.tools._builtin_base import BuiltinTool, object_schema
from harness.tools._sandbox import Limits, run_command

__all__ = [
    "OUTPUT_BYTES",
    "TIMEOUT_S",
    "RunPythonTool",
    "mask_python_folders",
    "run_python_files",
]

#: Seconds a program may run (wall clock; its CPU time is capped a second later).
TIMEOUT_S = 10.0
#: Output kept for the model, in bytes.
OUTPUT_BYTES = 4096


async def run_python_files(
    files: dict[str, str], command: str, *, timeout_s: float, limits: Limits
) -> Any:
    """Write ``files`` into a fresh folder, run ``command`` there in the sandbox (mounted at
    ``/workspace``), remove the folder, and return the :class:`CommandRun`."""
    folder = Path(tempfile.mkdtemp(prefix="harness-python-"))
    try:
        for name, text in files.items():
            (folder / name).write_text(text, encoding="utf-8")
        return await run_command(command, folder, timeout_s=timeout_s, limits=limits)
    finally:
        remove_tree(folder)


def _python_folders() -> list[str]:
    """The running Python's prefixes (and their real paths), longest first."""
    found = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    found |= {os.path.realpath(p) for p in found}
    return sorted((p.rstrip("/") for p in found if p.rstrip("/")), key=len, reverse=True)


def mask_python_folders(text: str) -> str:
    """``text`` with the running Python's folders written ``<python>``."""
    for folder in _python_folders():
        text = text.replace(folder + "/", "<python>/")
    return text


class RunPythonTool(BuiltinTool):
    """Run a Python program in a fresh sandboxed interpreter."""

    name = "run_python"
    description = (
        "Run a Python program in a fresh sandboxed interpreter (no network, no files) and "
        "return its exit code and output (stdout and stderr). Nothing persists between calls: "
        "include the function and the code that calls or tests it. Time limit: 10 s."
    )
    parameters = object_schema(
        {"code": {"type": "string", "description": "The Python program to run."}}, "code"
    )
    parallel_safe = False
    read_only = True

    def __init__(self, *, timeout_s: float = TIMEOUT_S, output_bytes: int = OUTPUT_BYTES) -> None:
        self.timeout_s = timeout_s
        self.limits = Limits(
            cpu_s=int(timeout_s) + 1, processes=32, output_bytes=output_bytes, disk_mb=64
        )

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        args = self._check(args)
        code = self._str(args, "code")
        if not code.strip():
            raise ToolError("argument 'code' must not be empty")
        done = await run_python_files(
            {"main.py": code}, "python main.py", timeout_s=self.timeout_s, limits=self.limits
        )
        if done.timed_out and done.stopped is None:
            status = f"timed out after the {self.timeout_s:g} s limit; the program was killed"
        else:
            status = done.describe()
        output = mask_python_folders(done.output).rstrip("\n")
        text = f"{status}\n{output or '(no output)'}"
        if done.stopped is not None:
            raise ToolError(text)
        return text

    def __repr__(self) -> str:
        return "RunPythonTool()"
