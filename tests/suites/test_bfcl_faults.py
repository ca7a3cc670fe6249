"""BFCL's classes compute on the model's numbers, bounded and off the harness's process (issue 34,
faults round 5, items 2-4).

Item 2: a BFCL tool call ran BFCL's class on the event loop (``logarithm(precision=60000)`` took
7.3 s with ``tool_timeout_s=2`` and no other cell ran meanwhile). Item 3: grading re-executed the
model's calls with no limit, under one process-wide lock. Item 4: ``mpmath``'s precision is
global to a process and the tool side and the grading side took different locks: verdicts
flipped. Now both run in killable worker processes (:mod:`harness.grading._bfcl_worker`); the
10,000-grading figure is ``benchmarks/bfcl_isolation.py``; the CLI's side (other cells go on,
Ctrl-C) is tests/e2e/test_bfcl_cli_faults.py.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip(
    "bfcl_eval",
    reason="bfcl-eval is not installed (pip install --no-deps bfcl-eval==2026.3.23 mpmath)",
)
pytest.importorskip(
    "mpmath", reason="mpmath is not installed (pip install --no-deps bfcl-eval==2026.3.23 mpmath)"
)

from harness.errors import ToolError
from harness.grading._bfcl_checker import grade_multi_turn
from harness.grading._bfcl_worker import BfclWorkers, WorkerStopped, using
from harness.suites import _bfcl_data as data
from harness.suites._bfcl_tools import build_tools
from harness.tools._base import ToolContext

#: Spawns processes (the fast loop skips it). Each test starts BFCL workers, which import BFCL
#: first: 45-68 s per test measured at a load average of 14 on 2 cores (the limits under test
#: are timed inside each test, not by this).
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

SLOW = ("power", {"base": 3, "exponent": 20_000_000})  # about 35 s of one core


def _math_entry() -> data.BfclEntry:
    return data.entry("multi_turn_base_15")  # GorillaFileSystem and MathAPI


def _ctx() -> ToolContext:
    return ToolContext(workspace=None, session_id="s")  # type: ignore[arg-type]


def _truth_turns(e: data.BfclEntry) -> list[list[list[tuple[str, object]]]]:
    """The ground truth as the model's calls: one call per step."""
    return [
        [[(c.name, c.arguments)] for step in turn for c in step]
        for turn in data.ground_truth_calls(e)
    ]


async def test_a_slow_call_is_stopped_at_its_limit_while_the_loop_runs() -> None:
    e = _math_entry()
    toolset = build_tools(e)
    assert toolset.state is not None
    tools = {t.name: t for t in toolset.tools}
    with using(BfclWorkers()):
        assert await tools["cd"].run({"folder": "workspace"}, _ctx())  # the worker is warm
        before = toolset.state.pickled
        ticks = 0

        async def heartbeat() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.05)
                ticks += 1

        beat = asyncio.create_task(heartbeat())
        # SLOW runs for hours: this error means it was stopped at its limit.
        with pytest.raises(ToolError, match=r"power: BFCL's call took over 2 s and was stopped"):
            await toolset.state.call(*SLOW, timeout_s=2)
        beat.cancel()
        assert ticks >= 10  # the loop ran meanwhile (it never ran in the old code)
        assert toolset.state.pickled == before  # the stopped call changed nothing
        assert "result" in await tools["add"].run({"a": 1, "b": 2}, _ctx())  # a new worker


def test_a_slow_grading_is_stopped_and_fails_while_others_grade() -> None:
    e = _math_entry()
    names = [f["name"] for f in e.all_functions()]
    truth = _truth_turns(e)
    slow = [[*turn] for turn in truth]
    slow[0] = [[SLOW], *slow[0]]  # the model's first step: the slow call
    with using(BfclWorkers()) as workers:
        assert grade_multi_turn(e.raw, names, e.ground_truth, truth).passed  # warm
        finished: list[float] = []

        def others() -> None:
            for _ in range(5):
                assert grade_multi_turn(e.raw, names, e.ground_truth, truth).passed
                finished.append(time.monotonic())

        other = threading.Thread(target=others)
        other.start()
        verdict = grade_multi_turn(e.raw, names, e.ground_truth, slow, timeout_s=3)
        other.join(120)
        assert not verdict.passed
        assert verdict.error_type == "harness:checker_timeout"
        assert "took over 3 s and was stopped" in verdict.explanation
        assert len(finished) == 5
        assert workers.workers <= 2  # the slow grading's worker was killed, not kept


async def test_the_harness_process_never_runs_bfcl_math() -> None:
    """A MathAPI call with a high precision runs elsewhere: this process's ``mpmath``
    precision never changes while it runs, so no grading or call here can see it."""
    import mpmath

    e = _math_entry()
    toolset = build_tools(e)
    assert toolset.state is not None
    default = mpmath.mp.prec
    seen: set[int] = set()
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            seen.add(mpmath.mp.prec)
            time.sleep(0.002)

    watcher = threading.Thread(target=watch)
    with using(BfclWorkers()):
        await toolset.state.call("add", {"a": 1, "b": 2})  # warm
        watcher.start()
        try:
            result = await toolset.state.call(
                "logarithm", {"value": 7, "base": 3, "precision": 20_000}, 60
            )
        finally:
            stop.set()
            watcher.join()
    assert "1.771243749161422260067928307082457718066" in result  # all its digits
    assert seen == {default}


async def test_kill_all_ends_a_running_call_and_refuses_new_ones(tmp_path: Path) -> None:
    toolset = build_tools(_math_entry())
    assert toolset.state is not None
    workers = BfclWorkers()
    with using(workers):
        await toolset.state.call("add", {"a": 1, "b": 2})
        call = asyncio.create_task(toolset.state.call(*SLOW, timeout_s=60))
        await asyncio.sleep(1)
        workers.kill_all()
        with pytest.raises(WorkerStopped):  # ended, not the ToolError of its 60 s limit
            await call
        with pytest.raises(WorkerStopped):
            await toolset.state.call("add", {"a": 1, "b": 2})
        workers.reset()
        assert "3" in await toolset.state.call("add", {"a": 1, "b": 2})
