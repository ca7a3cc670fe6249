"""A hook's answer that raises while it is read (round 15 probe, found then, fixed in round 16
by the lead): an ``Inject`` whose messages iterable raises a ``BaseException`` of its own ended
the run ``error_during_execution``, and a ``HaltRun`` subclass whose ``reason`` is a property
that raises ended it ``internal error``: each is the hook's crash."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from conftest import answered

from harness import HaltRun, Inject


class Boom(BaseException):
    pass


def _messages() -> Iterator[str]:
    yield "first"
    raise Boom("from the iterable")


class Sly(HaltRun):
    @property
    def reason(self) -> str:
        raise Boom("no reason")


ANSWERS: dict[str, tuple[str, Any]] = {
    "Inject-iterable-BaseException": ("PostToolUse", lambda: Inject(_messages())),  # type: ignore[arg-type]
    "HaltRun-property-BaseException": ("PreToolUse", lambda: object.__new__(Sly)),
}


@pytest.mark.parametrize("case", sorted(ANSWERS))
def test_an_answer_raising_while_read_is_the_hooks_crash(case: str) -> None:
    event, make = ANSWERS[case]
    why = answered(event, make).halted_reason or ""
    assert why.startswith(f"hook_crashed: {event}: "), why
    assert "Boom" in why


def test_ctrl_c_while_an_answer_is_read_still_stops_the_run() -> None:
    def interrupted() -> Iterator[str]:
        yield from ()
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        answered("PostToolUse", lambda: Inject(interrupted()))  # type: ignore[arg-type]
