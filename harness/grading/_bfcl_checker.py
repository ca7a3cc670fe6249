"""Grade one BFCL cell with BFCL's own checkers (``bfcl-eval``'s ``ast_checker`` and
``multi_turn_checker``), the way BFCL's evaluation runner calls them for function-calling models.

- AST categories: the model's first tool-calling reply, as ``[{bfcl_name: arguments}]`` in the
  model's order (renamed tool names mapped back to BFCL's dotted names). No call at all is BFCL's
  ``ast_decoder:decoder_failed``; irrelevance passes iff there is no call, live_relevance iff
  there is one.
- Multi-turn: per user turn, per step, the calls rendered as BFCL's call strings by
  :func:`~harness.grading._bfcl_calls.render_call` (never an unsanitised name); empty steps are
  dropped as BFCL does; a turn count unlike the ground truth's, or ``force_terminated`` (more than
  20 steps in a turn), is ``multi_turn:force_terminated``.

Isolation: the multi-turn checker keeps tool instances in ``multi_turn_utils``'s module globals
keyed by model name and entry id, MathAPI sets process-global ``mpmath`` and ``decimal``
precision, and the checker re-executes the model's calls, which may compute for minutes
(``power(3, 10**7)``). So a multi-turn grading runs in one of BFCL's worker processes
(:mod:`harness.grading._bfcl_worker`), which runs one thing at a time: it uses a model name never
used before in that process, deletes the globals it created, and restores both precisions; past
:data:`GRADE_TIME_LIMIT_S` its worker is killed and the model fails with
``harness:checker_timeout``. Nothing of it runs in the harness's process, so a grading never
waits for another, nor sees another's precision. A worker holds at most
:data:`~harness.grading._bfcl_worker.MEMORY_LIMIT_BYTES`: a re-executed call past it gets BFCL's
own ``Error during execution`` result (a worker that dies is replaced once, as one killed from
outside would be; one that dies again fails the model with ``harness:checker_memory``).
"""

from __future__ import annotations

import decimal
import itertools
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from harness.grading._bfcl_calls import render_call
from harness.grading._bfcl_env import CHECKER_MODEL, bfcl_module
from harness.grading._bfcl_worker import (
    MEMORY_LIMIT_BYTES,
    WorkerDied,
    current,
    give_back_memory,
)

__all__ = ["GRADE_TIME_LIMIT_S", "BfclVerdict", "grade_ast", "grade_multi_turn"]

#: A multi-turn grading (BFCL re-executing the ground truth and the model's calls) is stopped
#: past this many seconds: the model fails (``harness:checker_timeout``).
GRADE_TIME_LIMIT_S = 60.0

_AST = "bfcl_eval.eval_checker.ast_eval.ast_checker"
_MULTI = "bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker"
_UTILS = "bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils"
_serial = itertools.count(1)

Call = tuple[str, Any]


class BfclVerdict(NamedTuple):
    passed: bool
    error_type: str | None
    explanation: str


def _fail(error_type: str, message: Any) -> BfclVerdict:
    text = "; ".join(str(m) for m in message) if isinstance(message, list) else str(message)
    return BfclVerdict(False, error_type, f"BFCL {error_type}: {text}")


def grade_ast(
    category: str,
    functions: Sequence[Mapping[str, Any]],
    possible_answer: Any,
    calls: Sequence[Call] | None,
) -> BfclVerdict:
    """Grade a single-turn entry. ``calls`` is the model's first tool-calling reply as
    ``(tool name, arguments)`` pairs (``None`` or empty: the model made no call)."""
    calls = list(calls or [])
    if category.endswith("irrelevance"):
        if calls:
            return _fail(
                "irrelevance_error:decoder_success",
                f"the model called {', '.join(str(n) for n, _ in calls)} when no function applies",
            )
        return BfclVerdict(True, None, "BFCL: no call, as expected")
    if category.endswith("relevance"):
        if not calls:
            return _fail("relevance_error:decoder_failed", "the model made no call")
        return BfclVerdict(True, None, "BFCL: at least one call, as expected")
    if not calls:
        return _fail("ast_decoder:decoder_failed", "the model made no tool call")
    names = {re.sub(r"\.", "_", f["name"]): f["name"] for f in functions}
    output: list[dict[str, Any]] = []
    for name, args in calls:
        if not isinstance(args, dict):
            return _fail("ast_decoder:decoder_failed", f"the arguments of {name} are not an object")
        output.append({names.get(name, name): args})
    checker = bfcl_module(_AST)
    language = bfcl_module("bfcl_eval.constants.enums").Language.PYTHON
    try:
        result = checker.ast_checker(
            [dict(f) for f in functions], output, possible_answer, language, category, CHECKER_MODEL
        )
    except Exception as exc:  # the checker choked on the model's output: the model failed
        return _fail("harness:checker_exception", f"{type(exc).__name__}: {exc}")
    if result["valid"]:
        return BfclVerdict(True, None, "BFCL: valid")
    return _fail(str(result.get("error_type")), result.get("error", ""))


def _precision() -> tuple[int, int]:
    mpmath = bfcl_module("mpmath")
    return int(mpmath.mp.prec), decimal.getcontext().prec


def _restore(saved: tuple[int, int]) -> None:
    bfcl_module("mpmath").mp.prec = saved[0]
    decimal.getcontext().prec = saved[1]


def _purge(prefix: str) -> None:
    namespace = vars(bfcl_module(_UTILS))
    for key in [k for k in namespace if k.startswith(prefix)]:
        del namespace[key]


def grade_multi_turn(
    entry: Mapping[str, Any],
    function_names: Sequence[str],
    ground_truth: Sequence[Sequence[str]],
    turns: Sequence[Sequence[Sequence[Call]]],
    *,
    force_terminated: bool = False,
    timeout_s: float = GRADE_TIME_LIMIT_S,
) -> BfclVerdict:
    """Grade a multi-turn entry. ``entry`` has BFCL's ``id``, ``initial_config`` and
    ``involved_classes``; ``function_names`` are every function the entry may call (held-out
    ones included); ``turns`` holds, per user turn, the steps' calls. BFCL's checker runs in a
    worker process, stopped past ``timeout_s``."""
    if force_terminated or len(turns) != len(ground_truth):
        return _fail(
            "multi_turn:force_terminated",
            f"the run has {len(turns)} turns for {len(ground_truth)} in the ground truth"
            + (" (a turn took more steps than allowed)" if force_terminated else ""),
        )
    allowed = frozenset(function_names)
    decoded = [
        [[render_call(n, a, allowed) for n, a in step] for step in turn if step] for turn in turns
    ]
    test_entry = {
        "id": entry["id"],
        "initial_config": entry["initial_config"],
        "involved_classes": list(entry["involved_classes"]),
    }
    truth = [list(t) for t in ground_truth]
    try:
        return current().call_sync(_check, decoded, truth, test_entry, timeout_s=timeout_s)
    except TimeoutError:
        return _fail(
            "harness:checker_timeout",
            f"BFCL's re-execution of the calls took over {timeout_s:g} s and was stopped",
        )
    except WorkerDied:  # twice: out of memory where the checker could not catch it
        return _fail(
            "harness:checker_memory",
            "BFCL's re-execution of the calls stopped its worker process, twice in two workers "
            f"(past its memory limit of {MEMORY_LIMIT_BYTES // 2**20:,} MiB, or killed from "
            "outside)",
        )


def _check(
    decoded: list[list[list[str]]], truth: list[list[str]], test_entry: dict[str, Any]
) -> BfclVerdict:
    """BFCL's multi-turn checker on the rendered calls (in a BFCL worker process, which runs
    one thing at a time)."""
    checker = bfcl_module(_MULTI)
    category = str(test_entry["id"]).rsplit("_", 1)[0]
    name = f"{CHECKER_MODEL}-{os.getpid()}-{next(_serial)}"
    prefix = re.sub(r"[-./:]", "_", name) + "_"
    saved = _precision()
    try:
        result = checker.multi_turn_checker(decoded, truth, test_entry, category, name)
    except Exception as exc:  # e.g. an assertion inside the checker on odd output
        return _fail("harness:checker_exception", f"{type(exc).__name__}: {exc}")
    finally:
        _purge(prefix)
        _restore(saved)
        give_back_memory()  # a call past the memory limit left freed heap behind
    if result["valid"]:
        return BfclVerdict(True, None, "BFCL: valid")
    return _fail(str(result.get("error_type")), result.get("error_message", ""))
