"""``ast.parse`` runs one at a time in the process (stop 48).

A CI run failed one recorded HumanEval cell as a grader error: ``SystemError: AST constructor
recursion depth mismatch (before=27, after=22)``. Round 22 A moved the grader's reading of an
answer onto a thread; CPython 3.11 keeps the depth of its parse-to-objects conversion per
interpreter, so two threads converting at once (the collector running a finalizer inside one
lets the other in) break it. The race is rare and cannot be made to happen on demand: this test
checks the fix's property, that parses from many threads never overlap (they did before)."""

from __future__ import annotations

import ast
import threading
import time
from typing import Any

import pytest

from harness.grading._humaneval import defines


def test_parses_from_many_threads_never_overlap(monkeypatch: pytest.MonkeyPatch) -> None:
    inside, most = 0, 0
    count = threading.Lock()
    real = ast.parse

    def watched(*args: Any, **kwargs: Any) -> Any:
        nonlocal inside, most
        with count:
            inside += 1
            most = max(most, inside)
        time.sleep(0.01)  # a parse long enough for the others to arrive
        try:
            return real(*args, **kwargs)
        finally:
            with count:
                inside -= 1

    monkeypatch.setattr(ast, "parse", watched)
    found: list[bool] = []
    threads = [
        threading.Thread(target=lambda: found.append(defines("def f(x):\n    return x\n", "f")))
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert found == [True] * 8
    assert most == 1
