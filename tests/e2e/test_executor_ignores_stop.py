"""An executor plug-in that ignores ``request_stop`` and refuses to be cancelled (adversary
round 8, issue 34). Before: ``harness run --executor`` went on through any number of Ctrl-C
(killed after 50 s and two SIGINTs). Now the first SIGINT asks the executor to stop and a
second stops waiting for it: the run ends interrupted, exit 130, the resume command printed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

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
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "run", "s.yaml", "--providers", "mock",
         "--modes", "react", "--db", "h.duckdb", "--no-progress", "--label", "L",
         "--executor", "stubborn:make"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    try:
        for line in proc.stdout:  # the run is under way once the executor says so
            if "executor running" in line:
                break
        proc.send_signal(signal.SIGINT)
        time.sleep(1)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, out
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
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "run", "s.yaml", "--providers", "mock",
         "--modes", "react", "--db", "h.duckdb", "--no-progress", "--label", "L",
         "--executor", "blocking:make"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            if "executor running" in line:
                break
        for _ in range(times):
            time.sleep(1.5)  # the loop has been held for more than HELD_S
            proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, out
    assert "Traceback" not in out, out
    assert "resume with: harness run" in " ".join(out.split())
