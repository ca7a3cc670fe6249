"""A hook answering a supported class around a value that is not a string (issue 34, adversary
round 14, part A): ``Augment(123)``, ``Transform(5)``, ``Deny(x)``/``HaltRun(x)`` with an
``x`` whose ``str`` raises, ``Inject(5)``. The run ended ``error_during_execution`` naming a
``TypeError`` or the ``str``'s error (``Transform(5)``: ``internal error: TypeError: object
of type 'int' has no len()`` with a logged traceback, the 5 kept as the user's message), never
the hook's crash. Round 13 part A made an unsupported answer ``hook_crashed``; this is its
payload. Fixed by the lead in ``harness/kernel/_hooks.py`` (``_taken``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from conftest import answered

from harness import Augment, Deny, HaltRun, Inject, Transform


class Unreadable:
    def __str__(self) -> str:
        raise RuntimeError("no str")

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


ANSWERS: dict[str, tuple[str, Callable[[], Any]]] = {
    "Augment-int": ("PostToolUse", lambda: Augment(123)),  # type: ignore[arg-type]
    "Augment-None": ("PostToolUse", lambda: Augment(None)),  # type: ignore[arg-type]
    "Transform-int": ("UserPromptSubmit", lambda: Transform(5)),  # type: ignore[arg-type]
    "Transform-unreadable": ("UserPromptSubmit", lambda: Transform(Unreadable())),  # type: ignore[arg-type]
    "Deny-unreadable": ("PreToolUse", lambda: Deny(Unreadable())),  # type: ignore[arg-type]
    "HaltRun-unreadable": ("PreToolUse", lambda: HaltRun(Unreadable())),  # type: ignore[arg-type]
    "Inject-int": ("PostToolUse", lambda: Inject(5)),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("case", sorted(ANSWERS))
def test_a_hook_answer_holding_what_is_not_text_is_the_hooks_crash(case: str) -> None:
    event, make = ANSWERS[case]
    result = answered(event, make)
    assert (result.halted_reason or "").startswith(f"hook_crashed: {event}: "), result.halted_reason
