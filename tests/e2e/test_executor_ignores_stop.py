"""An executor plug-in that ignores ``request_stop`` and refuses to be cancelled (adversary
round 8, issue 34). Before: ``harness run --executor`` went on through any number of Ctrl-C
(killed after 50 s and two SIGINTs). Now the first SIGINT asks the executor to stop and a
second stops waiting for it: the run ends interrupted, exit 130, the resume command printed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.signalled_run import run_and_signal

pytestmark = pytest.mark.slow  # spawns the CLI as a process

EXECUTOR = """\
import asyncio


class Stubborn:
    def request_stop(self):
        pass

    async def run(self, cells, on_outcome=None):
        print("executor running", flush=True)
        while True:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                continue


def make(options, sink, context):
    return Stubborn()
"""
SUITE = "suite: s\ntasks:\n  - {id: a, prompt: hi, expect: {kind: contains, value: hi}, mock: {turns: [{text: hi}]}}\n"  # noqa: E501


@pytest.mark.timeout(600)
def test_a_second_sigint_stops_waiting_for_a_stubborn_executor(tmp_path: Path) -> None:
    (tmp_path / "stubborn.py").write_text(EXECUTOR)
    (tmp_path / "s.yaml").write_text(SUITE)
    code, out = run_and_signal(tmp_path, "stubborn:make", ready="executor running")
    assert code == 130, out
    assert "resume with: harness run" in " ".join(out.split())


BLOCKING = """\
import time


class Blocking:
    def request_stop(self):
        pass

    async def run(self, cells, on_outcome=None):
        print("executor running", flush=True)
        while True:
            time.sleep(3600)  # holds the event loop: its signal handlers never run


def make(options, sink, context):
    return Blocking()
"""


@pytest.mark.timeout(600)
@pytest.mark.parametrize("times", [2, 3])
def test_ctrl_c_thrice_ends_a_run_whose_executor_holds_the_event_loop(
    tmp_path: Path, times: int
) -> None:
    """Adversary round 10 part A: an executor whose ``run`` blocks the loop (``time.sleep``)
    survived any number of SIGINTs (only SIGKILL ended it): the loop's handlers cannot run while
    it is held. Python's own handler now interrupts the blocking code at the third unseen
    Ctrl-C, or at the second while the loop has not run for a second (signals sent close
    together under load arrive as one: round 11's SIGTERM test lost one that way): the run
    ends interrupted, exit 130, the resume command printed."""
    (tmp_path / "blocking.py").write_text(BLOCKING)
    (tmp_path / "s.yaml").write_text(SUITE)
    # each signal after the loop has been held for more than HELD_S
    code, out = run_and_signal(
        tmp_path,
        "blocking:make",
        ready="executor running",
        times=times,
        before_s=1.5,
        between_s=1.5,
    )
    assert code == 130, out
    assert "Traceback" not in out, out
    assert "resume with: harness run" in " ".join(out.split())
