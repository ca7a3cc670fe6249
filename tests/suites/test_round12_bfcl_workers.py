"""BFCL's warm workers (issue 34, round 12 probe): no cell sees another's BFCL data, and a worker
killed from outside is not blamed on the call.

1. TravelAPI puts the dicts of ``long_context.CREDIT_CARD_EXTENSION`` into a long-context
   instance by reference and ``book_flight`` changes them in place: in a warm worker, three other
   cells' bookings moved a later cell's balance from 5000.0 to 3800.0, and one grading repeated
   9 times failed on the 6th (``multi_turn:instance_state_mismatch``).
2. A worker killed from outside (an OOM killer, ``docker``) made a correct answer fail as
   ``harness:checker_memory ... (its memory limit is 1,024 MiB)``: untrue. A dead worker's call
   now runs once more in a fresh one.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

pytest.importorskip(
    "bfcl_eval",
    reason="bfcl-eval is not installed (pip install --no-deps bfcl-eval==2026.3.23 mpmath)",
)
pytest.importorskip(
    "mpmath", reason="mpmath is not installed (pip install --no-deps bfcl-eval==2026.3.23 mpmath)"
)

from harness.errors import WorkerDied
from harness.grading._bfcl_checker import grade_multi_turn
from harness.grading._bfcl_worker import BfclWorkers, using
from harness.suites import _bfcl_data as data
from harness.suites._bfcl_tools import BfclState
from tests.suites.bfcl_travel import BALANCE, BOOKING

#: Spawns BFCL workers (each imports BFCL first): the fast loop skips it.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


async def test_other_cells_bookings_do_not_change_a_cells_card() -> None:
    with using(BfclWorkers()) as workers:
        fresh = await BfclState(data.entry("multi_turn_long_context_152")).call(
            "get_credit_card_balance", BALANCE
        )
        for _ in range(3):
            other = BfclState(data.entry("multi_turn_long_context_151"))
            assert '"booking_status": true' in await other.call("book_flight", BOOKING)
        later = await BfclState(data.entry("multi_turn_long_context_152")).call(
            "get_credit_card_balance", BALANCE
        )
        assert workers.workers == 1  # one warm worker served every cell
    assert fresh == '{"card_balance": 5000.0}'
    assert later == fresh  # 3800.0 before: the other cells' three bookings


async def test_a_cells_own_bookings_still_count_across_its_calls() -> None:
    """The copy is put back in BFCL's module, never in the cell's own instances."""
    with using(BfclWorkers()):
        state = BfclState(data.entry("multi_turn_long_context_151"))
        await state.call("book_flight", BOOKING)
        await state.call("book_flight", BOOKING)
        balance = await state.call(
            "get_credit_card_balance", {**BALANCE, "access_token": "abc123xyz"}
        )
    assert balance == '{"card_balance": 4200.0}'  # 5000.0 less two business fares of 400.0


def test_one_grading_repeated_in_a_warm_worker_keeps_its_verdict() -> None:
    e = data.entry("multi_turn_long_context_151")
    call = "book_flight(" + ", ".join(f"{k}={v!r}" for k, v in BOOKING.items()) + ")"
    turns = [[[("book_flight", dict(BOOKING))]]]
    names = [f["name"] for f in e.functions]
    with using(BfclWorkers()) as workers:
        verdicts = [grade_multi_turn(e.raw, names, [[call]], turns) for _ in range(9)]
        assert workers.workers == 1
    assert [v.error_type for v in verdicts] == [None] * 9  # the 6th failed before


def _die_once(marker: str) -> int:
    """In a worker: be killed (as an OOM killer would) the first time, answer the next."""
    if not os.path.exists(marker):
        Path(marker).touch()
        os.kill(os.getpid(), signal.SIGKILL)
    return os.getpid()


def _die_always() -> int:
    os.kill(os.getpid(), signal.SIGKILL)
    return 0


def test_a_call_whose_worker_is_killed_runs_again_in_a_fresh_one(tmp_path: Path) -> None:
    with using(BfclWorkers()) as workers:
        pid = workers.call_sync(_die_once, str(tmp_path / "sync"), timeout_s=120)
        assert pid != os.getpid()
        with pytest.raises(
            WorkerDied,
            match=r"died \(exit code \{SIGKILL\(-9\)\}\), and so did the fresh one it ran in next",
        ):
            workers.call_sync(_die_always, timeout_s=120)


async def test_an_async_call_whose_worker_is_killed_runs_again(tmp_path: Path) -> None:
    with using(BfclWorkers()) as workers:
        assert await workers.call(_die_once, str(tmp_path / "async"), timeout_s=120) > 0
        with pytest.raises(WorkerDied, match="and so did the fresh one it ran in next"):
            await workers.call(_die_always, timeout_s=120)


def test_a_grading_whose_idle_worker_was_killed_passes() -> None:
    """The OOM killer picks a warm idle worker: the next grading gets a fresh one and passes
    (``harness:checker_memory`` before)."""
    e = data.entry("multi_turn_base_15")
    names = [f["name"] for f in e.all_functions()]
    truth = [
        [[(c.name, c.arguments)] for step in turn for c in step]
        for turn in data.ground_truth_calls(e)
    ]
    with using(BfclWorkers()) as workers:
        pid = workers.call_sync(os.getpid, timeout_s=120)  # the warm worker, then idle
        os.kill(pid, signal.SIGKILL)
        verdict = grade_multi_turn(e.raw, names, e.ground_truth, truth)
    assert (verdict.passed, verdict.error_type) == (True, None), verdict.explanation
