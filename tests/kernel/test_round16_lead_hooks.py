"""A hook's answer that raises while it is read (round 15 probe, found then, fixed in round 16
by the lead): an ``Inject`` whose messages iterable raises a ``BaseException`` of its own ended
the run ``error_during_execution``, and a ``HaltRun`` subclass whose ``reason`` is a property
that raises ended it ``internal error``: each is the hook's crash."""

from __future__ import annotations

import os
import subprocess
import sys
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


_BACKTRACKING = """
import harness
from harness import HookMatcher
from harness.providers import MockProvider

name = "a" * 40 + "!"  # the model's tool name: PreToolUse fires before it is refused
turns = [{"tool_calls": [{"name": name, "arguments": {}}]}, {"text": "ok"}]
hooks = {"PreToolUse": [HookMatcher("(a|aa)+$", [lambda payload, tid: None])]}
result = harness.run("hi", provider=MockProvider(turns=turns), hooks=hooks)
print(result.halted_reason)
"""


@pytest.mark.timeout(300)
def test_a_matcher_backtracking_on_a_models_tool_name_is_stopped() -> None:
    """Before: stdlib ``re`` searched the model's 41-character name for 35 s holding the GIL
    (SIGTERM waited too; each letter more takes 1.6 times as long); now the matcher has 1 s
    and the hook is taken as crashed."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", _BACKTRACKING], capture_output=True,
                          text=True, timeout=120, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr[-500:]
    assert "hook_crashed: PreToolUse: its matcher" in done.stdout, done.stdout
    assert "took over 1 s on the tool name 'aaaa" in done.stdout
