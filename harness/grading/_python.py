"""Python graders in a child process: a timeout that really stops them, and no grader can take the
harness down with it.

A ``python`` grader (``function: "module:name"``) is user code, run with the user's rights, like
the suite itself. It runs in a worker process (``python -m harness.grading._python_child serve``,
kept warm per suite folder by :mod:`harness.grading._pool`) that gets the run's
:class:`~harness.Result` (as ``model_dump_json``, rebuilt there) and the workspace path, imports
the function with the suite file's folder first on ``sys.path``, calls it and writes its verdict
back as JSON. The parent waits at most ``timeout_s`` (default :data:`DEFAULT_TIMEOUT_S`; a
grader's ``timeout_s`` field overrides it) and then kills the worker's whole process group.

Whatever the grader does (raise, ``sys.exit``, ``KeyboardInterrupt``, ``os._exit``, loop forever,
print megabytes), the outcome is a :class:`~harness.grading._grade.Grade`; when the grader could
not give a verdict the grade has ``error=True`` (an ``error`` cell, not a failed one).

Workers belong to a :class:`~harness.grading._pool.GraderPool`: the bench runner owns one per
run and kills its graders on Ctrl-C (so a stuck grader never holds up the exit);
:func:`terminate_all` does that for graders run outside a runner. :func:`check_imports` imports
graders in a child process for the pre-flight check and ``harness suites validate``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from harness.core._result import Result
from harness.grading._base import GradeContext, Grader, walked
from harness.grading._fields import MAX_TIMEOUT_S, field_error
from harness.grading._grade import Grade
from harness.grading._pool import DEFAULT_POOL, GraderPool

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "IMPORT_TIMEOUT_S",
    "PythonGrader",
    "check_imports",
    "close",
    "python_graders",
    "reset",
    "run_python_grader",
    "terminate_all",
]

#: How long a python grader may run before its cell becomes an ``error`` cell.
DEFAULT_TIMEOUT_S = 30.0
#: How long importing every python grader of a run may take (pre-flight, ``suites validate``).
IMPORT_TIMEOUT_S = 60.0
_STDERR_TAIL = 400


def reset() -> None:
    """Allow graders of the default pool (graders run outside a bench runner) to start again
    after :func:`terminate_all`."""
    DEFAULT_POOL.reset()


def close() -> None:
    """Stop the default pool's idle grader workers."""
    DEFAULT_POOL.close_idle()


def terminate_all() -> int:
    """Kill every running grader of the default pool (and its children) and refuse new ones
    until :func:`reset`. Returns how many were killed. A bench runner stops its own pool."""
    return DEFAULT_POOL.kill_all()


_FUNCTION_RE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


class PythonGrader(Grader):
    """``python``: ``function`` (``"package.module:function"``, imported beside the suite file)
    called as ``fn(result, workspace)`` in a child process killed after ``timeout_s``."""

    kind: Literal["python"] = "python"
    reads_workspace: ClassVar[bool] = True
    needs_process: ClassVar[bool] = True
    slow: ClassVar[bool] = True
    time_limit_s: ClassVar[float | None] = None  # its own: timeout_s, in a killable worker
    field_help: ClassVar[dict[str, str]] = {"function": "'package.module:function'"}

    function: str
    timeout_s: float | None = Field(default=None, gt=0, le=MAX_TIMEOUT_S)

    @model_validator(mode="after")
    def _reference(self) -> PythonGrader:
        if not _FUNCTION_RE.match(self.function):
            raise field_error("function", f"{self.function!r} must look like 'package.module:name'")
        return self

    def evaluate(self, result: Result, context: GradeContext) -> Grade:
        """Run the grader in a child process with a timeout: nothing it does (loop, exit,
        crash) reaches the harness; a grader that gives no verdict is an error."""
        return run_python_grader(
            self.function,
            result,
            context.workspace,
            base_dir=self.base_dir,
            timeout_s=self.timeout_s,
            pool=context.pool,
        )


def python_graders(grader: Grader) -> list[tuple[str, Path | None]]:
    """Every python grader in ``grader`` (nested ones too): ``(module:function, folder)``."""
    return [(g.function, g.base_dir) for g in walked(grader) if isinstance(g, PythonGrader)]


def run_python_grader(
    ref: str,
    result: Result,
    workspace: Path | None,
    *,
    base_dir: Path | None = None,
    timeout_s: float | None = None,
    pool: GraderPool | None = None,
) -> Grade:
    """Call the grader ``ref`` (``module:function``) on ``result`` in a child process, a
    worker of ``pool`` (default: :data:`~harness.grading._pool.DEFAULT_POOL`)."""
    pool = pool or DEFAULT_POOL
    limit = DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s
    paths = _paths(base_dir)
    payload = {
        "function": ref,
        "paths": paths,
        "workspace": str(workspace) if workspace is not None else None,
        "result": result.model_dump_json(),
    }
    answer = pool.ask(tuple(paths), payload, limit)
    if answer is None:
        return _error(f"grader {ref} was stopped (the run was interrupted)")
    code, out, err, timed_out = answer
    if code is not None and code < 0 and pool.stopped():
        return _error(f"grader {ref} was stopped (the run was interrupted)")
    if timed_out:
        return _error(f"grader {ref} timed out after {limit:g}s (set timeout_s on the grader)")
    try:
        verdict = json.loads(out)
        return Grade(
            bool(verdict["passed"]),
            float(verdict["score"]),
            str(verdict["explanation"]),
            error=bool(verdict.get("error", False)),
        )
    except (ValueError, KeyError, TypeError):
        tail = _tail(err)
        how = "no exit status" if code is None else f"exit status {code}"
        how = f"signal {-code}" if code is not None and code < 0 else how
        return _error(
            f"grader {ref} died ({how}) without a verdict" + (f": {tail}" if tail else "")
        )


def check_imports(
    refs: Iterable[tuple[str, Path | None]], *, timeout_s: float = IMPORT_TIMEOUT_S
) -> list[str]:
    """Import each ``(module:function, suite folder)`` in one child process; returns one
    message per grader that cannot be imported or is not callable (empty: all good)."""
    wanted = sorted({(ref, str(base) if base is not None else "") for ref, base in refs})
    if not wanted:
        return []
    payload = {
        "graders": [
            {"function": ref, "paths": _paths(Path(b) if b else None)} for ref, b in wanted
        ],
    }
    code, out, err, timed_out = _call_child(["check"], payload, timeout_s)
    if timed_out:
        return [f"importing the python graders took more than {timeout_s:g}s"]
    try:
        problems = json.loads(out)["problems"]
        return [str(p) for p in problems]
    except (ValueError, KeyError, TypeError):
        tail = _tail(err)
        return [f"cannot import the python graders (exit status {code}): {tail or 'no output'}"]


def _paths(base_dir: Path | None) -> list[str]:
    first = [str(Path(base_dir).resolve())] if base_dir is not None else []
    return first + [p if p else os.getcwd() for p in sys.path]


def _error(explanation: str) -> Grade:
    return Grade(False, 0.0, explanation, error=True)


def _tail(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    flat = " | ".join(lines[-3:])
    return flat if len(flat) <= _STDERR_TAIL else "…" + flat[-_STDERR_TAIL:]


def _call_child(
    args: Sequence[str], payload: dict[str, Any], timeout_s: float
) -> tuple[int | None, str, str, bool]:
    """Run the child with ``payload`` on stdin: (exit status, stdout, stderr tail, timed out)."""
    with tempfile.TemporaryFile() as err_file:
        proc = subprocess.Popen(
            [sys.executable, "-m", "harness.grading._python_child", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err_file,
            start_new_session=True,  # Ctrl-C reaches the harness, which kills the group
        )
        try:
            out, _ = proc.communicate(json.dumps(payload).encode(), timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill(proc)
            # A grandchild that left the process group may hold the pipes: do not wait on it.
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.communicate(timeout=2)
            return proc.returncode, "", "", True
        except BaseException:
            _kill(proc)
            raise
        err_file.seek(0, os.SEEK_END)
        size = err_file.tell()
        err_file.seek(max(0, size - 4 * _STDERR_TAIL))
        err = err_file.read().decode("utf-8", errors="replace")
    return proc.returncode, out.decode("utf-8", errors="replace"), err, False


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, OSError):
        proc.kill()
