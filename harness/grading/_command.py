"""The ``command`` grader: run a command in the run's workspace, inside the shell tool's sandbox
(:mod:`harness.tools._sandbox`), after the run.

Fields: ``command`` (run with ``sh -c`` in the workspace, mounted at ``/workspace``; e.g.
``python -m pytest -q``), ``timeout_s`` (default :data:`DEFAULT_TIMEOUT_S`), and optionally
``score_regex`` and ``score_max``. The run passes when the command exits 0. Without
``score_regex`` the score is 1.0 or 0.0; with it, the first group of its first match in the output
is read as a number and divided by ``score_max`` (default 1), clipped to [0, 1]: with
``score_regex: '(\\d+) passed'`` and ``score_max: 5``, 3 of 5 tests passing scores 0.6 (and fails,
the exit status being 1). No match scores 0.

A command that fails, or uses more than ``timeout_s`` seconds of CPU (killed by SIGXCPU), fails
the task (that is the model's work being judged). CPU time, not the wall clock, bounds the
verdict: on a loaded machine a passing test suite took over 60 s of wall clock and its cells
failed. The wall clock is a safety net only (:data:`WALL_FACTOR` times ``timeout_s``, for a
command that waits without computing): its expiry, like a sandbox that cannot run here (bwrap
missing), is a grader error, so the cell is an ``error`` cell.
The explanation ends with the output's last 160 characters, with what varies by itself from run
to run masked first (durations such as pytest's ``in 0.85s`` -> ``in <dur>``, clock times,
temporary paths, pids: :func:`~harness.kernel._progress.normalise_output`), so that two replays
of a cell give the same row; the score reads the output as it was.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import ClassVar, Literal, TypeVar

import regex
from pydantic import Field, model_validator

from harness.core._result import Result
from harness.errors import ToolError
from harness.grading import _patterns
from harness.grading._base import GradeContext, Grader
from harness.grading._fields import MAX_TIMEOUT_S, field_error
from harness.grading._grade import Grade
from harness.grading._patterns import pattern_problem, searchable, timed_search
from harness.kernel._progress import normalise_output
from harness.tools._sandbox import Limits, SandboxUnavailable, run_command

__all__ = ["DEFAULT_TIMEOUT_S", "WALL_FACTOR", "CommandGrader"]

T = TypeVar("T")
#: Seconds of CPU a grading command may use (``timeout_s`` overrides it); past them it is killed
#: and fails.
DEFAULT_TIMEOUT_S = 60.0
#: The wall-clock safety net is this many times ``timeout_s``; its expiry is a grader error.
WALL_FACTOR = 5


def _unencodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


class CommandGrader(Grader):
    """``command``: run a command in the sandboxed workspace after the run; pass on exit 0."""

    kind: Literal["command"] = "command"
    reads_workspace: ClassVar[bool] = True
    needs_process: ClassVar[bool] = True
    time_limit_s: ClassVar[float | None] = None  # its own: timeout_s of CPU, a wall-clock net
    field_help: ClassVar[dict[str, str]] = {
        "command": "the command to run in the workspace, e.g. 'python -m pytest -q'"
    }

    command: str
    timeout_s: float | None = Field(default=None, gt=0, le=MAX_TIMEOUT_S)
    score_regex: str | None = None
    score_max: float | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _fields(self) -> CommandGrader:
        if not self.command.strip():
            raise field_error("command", "give the command to run, e.g. 'python -m pytest -q'")
        if "\x00" in self.command or _unencodable(self.command):
            raise field_error(  # every cell was an error cell (round 20 B)
                "command", "holds a NUL or a lone surrogate, which no command line can hold"
            )
        if self.score_regex is not None:
            problem = pattern_problem(self.score_regex)
            if problem is not None:
                raise field_error("score_regex", problem)
            if regex.compile(searchable(self.score_regex)).groups < 1:
                raise field_error(
                    "score_regex", "needs a group around the number, e.g. '(\\d+) passed'"
                )
        return self

    async def evaluate(self, result: Result, context: GradeContext) -> Grade:
        """Run the command in the sandboxed workspace and judge its exit status."""
        command, workspace = self.command, context.workspace
        if workspace is None:
            return Grade.of(False, f"no workspace to run {command!r} in (the runner gave none)")
        timeout = self.timeout_s or DEFAULT_TIMEOUT_S
        # The verdict's bound is CPU time (work: a loop that never ends is killed by SIGXCPU and
        # fails); the wall clock is only a safety net, WALL_FACTOR times longer, whose expiry is
        # a grader error (the cell is an error), since load alone can make a command slow.
        limits = Limits(cpu_s=math.ceil(timeout) + 1)
        wall = timeout * WALL_FACTOR
        job = run_command(command, Path(workspace), timeout_s=wall, limits=limits)
        try:
            done = await job
        except (SandboxUnavailable, ToolError) as exc:  # no sandbox, or no workspace folder
            return Grade(False, 0.0, f"command grader: {exc}", error=True)
        score = 1.0 if done.ok else 0.0
        scored = ""
        if self.score_regex is not None:
            try:
                score, scored = _score(self.score_regex, self.score_max or 1.0, done.output)
            except TimeoutError:  # backtracking (round 16 B: stdlib re held the GIL for ever)
                limit = _patterns.REGEX_TIME_LIMIT_S
                return Grade(False, 0.0, f"command grader: score_regex /{self.score_regex}/ "
                             f"took over {limit:g} s on the command's output: simplify the "
                             "pattern", error=True)  # fmt: skip
        # The explanation is part of a cell's row: it carries no timing (pytest's "in 0.85s", a
        # measured timeout), temporary path or pid, so that two replays give the same row.
        tail = " ".join(normalise_output(done.output).split())[-160:]
        detail = f"; output: …{tail}" if tail else ""
        if done.timed_out and done.stopped is None:
            return Grade(
                False,
                0.0,
                f"`{command}`: still running after {wall:g} s of wall clock (its CPU limit is "
                f"{limits.cpu_s} s); a wall-clock safety net, so the cell is an infrastructure "
                f"error, not a verdict{detail}",
                error=True,
            )
        status = normalise_output(done.describe())
        return Grade(done.ok, score, f"`{command}`: {status}{scored}{detail}")


def _score(regex: str, score_max: float, output: str) -> tuple[float, str]:
    found = timed_search(regex, output)
    if found is None:
        return 0.0, f"; score 0 (no match for /{regex}/)"
    try:
        value = float(found.group(1))
    except (TypeError, ValueError):
        return 0.0, f"; score 0 ({found.group(1)!r} is not a number)"
    score = min(1.0, max(0.0, value / score_max))
    return score, f"; score {score:.2f} ({found.group(1)}/{score_max:g})"
