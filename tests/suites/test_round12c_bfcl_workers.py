"""BFCL's warm workers when loky replaces a worker process by itself, and a call loky cannot
send (adversary round 12, part C).

1. loky restarts a worker process on its own: with psutil installed (the ``ray`` extra), one
   whose memory grew by more than ``LOKY_MAX_MEMORY_LEAK_SIZE`` (300 MB) after a call. The
   harness kept the worker as warm, and the next calls ran in a process never warmed up: no
   address-space limit (``RLIMIT_AS`` unlimited instead of 1 GiB) and no copy of BFCL's
   globals to put back (0 instead of 33), so TravelAPI's long-context cards leaked across cells
   again (seen with psutil and ``LOKY_MAX_MEMORY_LEAK_SIZE=1``: every call after the first in a
   fresh, cold process). The test makes loky replace its worker the other way it does it by
   itself, an idle timeout. Now a call warms its process up first when it is cold.
2. Within one grading, the model's TravelAPI instance and the ground truth's held the same
   ``long_context`` card dicts (BFCL's ``_add_credit_cards`` puts them in by reference): a
   wrong extra ``purchase_insurance(insurance_cost=999.0)`` on an extension card passed in 3 of
   4 entries tried (on the scenario's own card it fails). Now each instance has copies.
3. Arguments nested about 500 levels deep (JSON still parses them) could not be pickled to the
   worker: ``BfclState.call`` raised loky's ``PicklingError`` (a "tool crashed" for the model).
   Now it is a ToolError naming the nesting, and the cell's state is kept.
"""

from __future__ import annotations

import asyncio
import functools
import json
import resource

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
from harness.grading._bfcl_worker import MEMORY_LIMIT_BYTES, BfclWorkers, using
from harness.suites import _bfcl_data as data
from harness.suites._bfcl_tools import BfclState
from tests.suites.bfcl_travel import BALANCE, BOOKING, CARD

#: Spawns BFCL workers (each imports BFCL first): the fast loop skips it.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def _limit_and_copies() -> tuple[int, int]:
    from harness.grading import _bfcl_worker

    return resource.getrlimit(resource.RLIMIT_AS)[0], len(_bfcl_worker._pristine)


async def test_a_worker_process_loky_replaced_is_warmed_up_before_its_next_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import loky

    # Idle workers exit after 1 s; loky starts a new process for the next call, silently.
    monkeypatch.setattr(
        loky, "ProcessPoolExecutor", functools.partial(loky.ProcessPoolExecutor, timeout=1)
    )
    with using(BfclWorkers()) as workers:
        assert (await workers.call(_limit_and_copies, timeout_s=60))[0] == MEMORY_LIMIT_BYTES
        await asyncio.sleep(3)  # the warm worker's process exits
        limit, copies = await workers.call(_limit_and_copies, timeout_s=120)
        assert limit == MEMORY_LIMIT_BYTES  # was -1 (unlimited)
        assert copies > 0  # was 0: nothing to put back
        await asyncio.sleep(3)
        for _ in range(3):  # other cells' bookings, in a process loky replaced again
            other = BfclState(data.entry("multi_turn_long_context_151"))
            assert '"booking_status": true' in await other.call("book_flight", BOOKING)
        later = await BfclState(data.entry("multi_turn_long_context_152")).call(
            "get_credit_card_balance", BALANCE
        )
    assert json.loads(later) == {"card_balance": 5000.0}


async def test_arguments_nested_too_deep_to_send_are_a_tool_error() -> None:
    entry = data.entry("multi_turn_base_0")  # TwitterAPI and GorillaFileSystem
    login = {"username": "analyst_pro", "password": "Kj8#mP9$vL2"}
    deep = json.loads('{"content": "x", "tags": ' + "[" * 600 + "]" * 600 + ', "mentions": []}')
    with using(BfclWorkers()):
        state = BfclState(entry)
        await state.call("authenticate_twitter", login)
        before = state.pickled
        with pytest.raises(ToolError, match=r"post_tweet: the arguments are nested too deeply"):
            await state.call("post_tweet", deep)
        assert state.pickled == before
        assert '"tweet_count": 3' in await state.call("get_user_stats", {"username": "analyst_pro"})


@pytest.mark.parametrize("card", [CARD, "own"])
def test_a_wrong_purchase_on_a_long_context_card_fails_the_grading(card: str) -> None:
    e = data.entry("multi_turn_long_context_150")
    config = e.initial_config["TravelAPI"]
    card = next(iter(config["credit_card_list"])) if card == "own" else card
    names = [f["name"] for f in e.all_functions()]
    turns = [[[(c.name, dict(c.arguments)) for c in step] for step in turn]
             for turn in data.ground_truth_calls(e)]  # fmt: skip
    with using(BfclWorkers()):
        assert grade_multi_turn(e.raw, names, e.ground_truth, turns).passed
        purchase = {
            "access_token": config["access_token"],
            "insurance_type": "comprehensive",
            "booking_id": "booking_901",
            "insurance_cost": 999.0,
            "card_id": card,
        }
        turns[0].append([("purchase_insurance", purchase)])
        verdict = grade_multi_turn(e.raw, names, e.ground_truth, turns)
    assert verdict.error_type == "multi_turn:instance_state_mismatch"  # passed on CARD before
