"""The child side of :mod:`harness.grading._python` (run as ``python -m`` on this module).

``grade``: read ``{function, paths, workspace, result}`` as JSON on stdin, import the function
(``paths`` first on ``sys.path``: the suite's folder, then the parent's path), call it on the
rebuilt Result and the workspace, and write ``{passed, score, explanation, error}`` on stdout.
``check``: read ``{graders: [{function, paths}]}`` and write ``{problems: [...]}``.
``serve``: ``grade`` one request per line until stdin closes (a warm worker, see
:mod:`harness.grading._pool`).

The grader's own output (print, logging, C-level writes) goes to stderr: file descriptor 1 is
pointed at stderr before any user code runs, and the verdict goes to a private copy of the
original stdout. Every BaseException the grader raises becomes a verdict with ``error: true``.
"""

from __future__ import annotations

import importlib
import inspect
import json
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from harness._files import module_file_problem

if TYPE_CHECKING:
    from harness.grading._grade import Grade

__all__ = ["main"]


def _load(ref: str, paths: list[str]) -> Callable[..., Any]:
    """Import ``module:function`` with ``paths`` first on ``sys.path``; raises on failure."""
    sys.path[:0] = [p for p in paths if p not in sys.path[: len(paths)]]
    module_name, _, attr = ref.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:  # a FIFO as the module's file: say so, not "no module"
        problem = module_file_problem(exc.name, sys.path) if exc.name else None
        if problem is None:
            raise
        raise ModuleNotFoundError(f"{exc} ({problem}; refused)", name=exc.name) from None
    fn = getattr(module, attr)
    if not callable(fn):
        raise _NotCallable(f"grader {ref} is not callable ({type(fn).__name__})")
    return fn  # type: ignore[no-any-return]


class _NotCallable(TypeError):
    pass


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _valid(out: Any) -> bool:
    from harness.grading._grade import Grade

    if isinstance(out, Grade):
        return True
    if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], str):
        out = out[0]
    if isinstance(out, bool):
        return True
    return isinstance(out, int | float) and math.isfinite(out) and 0 <= out <= 1


def _coerce(out: Any, ref: str) -> Grade:
    """A grader function's return value as a :class:`Grade` (``_valid`` has checked its shape)."""
    from harness.grading._grade import PASS_THRESHOLD, Grade, one_line

    explanation = None
    if isinstance(out, Grade):
        return out
    if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], str):
        out, explanation = out
    if isinstance(out, bool):
        return Grade.of(out, explanation or f"{ref}: {'passed' if out else 'failed'}")
    if isinstance(out, int | float) and math.isfinite(out) and 0 <= out <= 1:
        score = float(out)
        return Grade(score >= PASS_THRESHOLD, score, explanation or f"{ref}: score {score:.2f}")
    return Grade.of(
        False,
        f"grader {ref} returned {one_line(repr(out), 40)}; expected a bool, a score in [0, 1], "
        "a Grade or (bool, explanation)",
    )


def _grade(payload: dict[str, Any]) -> dict[str, Any]:
    ref = str(payload["function"])

    def error(text: str) -> dict[str, Any]:
        return {"passed": False, "score": 0.0, "explanation": text, "error": True}

    try:
        fn = _load(ref, list(payload["paths"]))
    except _NotCallable as exc:
        return error(str(exc))
    except BaseException as exc:  # a grader's module may even call sys.exit on import
        return error(f"cannot import grader {ref}: {_describe(exc)}")
    from harness.core._result import Result

    result = Result.model_validate_json(payload["result"])
    workspace = Path(payload["workspace"]) if payload.get("workspace") else None
    try:
        out = fn(result, workspace)
    except BaseException as exc:  # SystemExit and KeyboardInterrupt too: an error cell
        return error(f"grader {ref} raised {_describe(exc)}")
    if inspect.isawaitable(out):
        if inspect.iscoroutine(out):
            out.close()
        return error(f"grader {ref} returned an awaitable; use a plain (sync) function")
    if not _valid(out):
        got = repr(out)
        got = got if len(got) <= 40 else got[:39] + "…"
        return error(
            f"grader {ref} returned {got}; expected a bool, a score in [0, 1], a Grade or "
            "(bool, explanation)"
        )
    verdict = _coerce(out, ref)
    return {
        "passed": verdict.passed,
        "score": verdict.score,
        "explanation": verdict.explanation,
        "error": verdict.error,
    }


def _check(payload: dict[str, Any]) -> dict[str, Any]:
    problems = []
    for item in payload["graders"]:
        ref = str(item["function"])
        try:
            _load(ref, list(item["paths"]))
        except _NotCallable as exc:
            problems.append(f"python {exc}")
        except BaseException as exc:
            problems.append(f"python grader {ref}: cannot import it: {_describe(exc)}")
    return {"problems": problems}


def serve() -> int:
    """Grade one JSON request per line on stdin, one JSON verdict per line, until EOF. The
    requests come in on a private copy of stdin: a grader reading stdin gets /dev/null."""
    requests = os.fdopen(os.dup(0), "rb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - lives as long as we do
    verdicts = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    for line in requests:
        answer = _grade(json.loads(line))
        verdicts.write(json.dumps(answer).encode() + b"\n")
        verdicts.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    command = (argv if argv is not None else sys.argv[1:])[:1]
    if command == ["serve"]:
        return serve()
    payload = json.loads(sys.stdin.buffer.read())
    # The verdict goes to a private copy of stdout; everything else written to fd 1 goes to
    # stderr, so a chatty grader cannot corrupt it.
    verdict_out: TextIO = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    answer = _check(payload) if command == ["check"] else _grade(payload)
    verdict_out.write(json.dumps(answer))
    verdict_out.flush()
    return 0


if __name__ == "__main__":
    # os._exit: no atexit handlers or non-daemon threads a grader left behind can hold us up.
    code = main()
    sys.stderr.flush()
    os._exit(code)
