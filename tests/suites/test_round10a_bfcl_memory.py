"""BFCL's classes build what the model's calls ask for (adversary round 10, issue 34 items 2-3).

85 calls of ``mkdir`` and ``cp`` make a GorillaFileSystem tree that branches in two at each of
21 levels (``cp`` copies a folder's contents by reference), and one ``find`` then lists every
path: a 329 MB result and 1.5 GB held by the worker in 4 s; with 30 levels, memory grew about
0.4 GB a second until the 10 s call limit, and the grading re-ran the calls for up to 60 s
(no memory cap: four cells at once could take the machine's memory). Now a BFCL worker holds at
most ``MEMORY_LIMIT_BYTES`` of address space and a result longer than ``MAX_RESULT_CHARS`` is
not returned: the call is an error result naming the limit, the cell's state as before it, and
a grading that meets the limit still gives a verdict.
"""

from __future__ import annotations

import resource
from typing import Any

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
from harness.suites._bfcl_tools import MAX_RESULT_CHARS, build_tools

#: Spawns BFCL worker processes (the fast loop skips it); a new worker imports BFCL first.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

ENTRY = "multi_turn_base_15"  # GorillaFileSystem and MathAPI


def branching_tree(levels: int) -> list[tuple[str, dict[str, Any]]]:
    """Calls that make folder ``Y{levels}`` hold 2**levels paths in 4 calls per level."""
    calls: list[tuple[str, dict[str, Any]]] = [("mkdir", {"dir_name": "Y0"})]
    for i in range(1, levels + 1):
        calls += [
            ("mkdir", {"dir_name": f"Y{i}"}),
            ("cp", {"source": f"Y{i - 1}", "destination": f"Y{i}"}),
            ("cp", {"source": f"Y{i - 1}", "destination": f"Z{i}"}),
            ("cp", {"source": f"Z{i}", "destination": f"Y{i}"}),
        ]
    return calls


def _address_space_limit() -> int:
    return resource.getrlimit(resource.RLIMIT_AS)[0]


async def test_a_call_past_the_memory_or_result_limit_is_stopped() -> None:
    e = data.entry(ENTRY)
    toolset = build_tools(e)
    state = toolset.state
    assert state is not None
    workers = BfclWorkers()
    with using(workers):
        # The worker's limit is set as it warms up (checked first: no allocation before it).
        assert await workers.call(_address_space_limit, timeout_s=60) == MEMORY_LIMIT_BYTES
        for name, args in branching_tree(16):
            assert "Error" not in await state.call(name, args)
        before = state.pickled
        # 2**16 paths: a 7.6 MB result (returned whole before).
        with pytest.raises(ToolError, match=r"find: BFCL's result is [\d,]+ characters, over"):
            await state.call("find", {"path": "Y16"})
        assert state.pickled == before
        assert len(await state.call("find", {"path": "Y3"})) < MAX_RESULT_CHARS
        for name, args in branching_tree(30)[len(branching_tree(16)) :]:
            await state.call(name, args)
        before = state.pickled
        # 2**30 paths: stopped at the memory limit, well before the 10 s limit.
        with pytest.raises(ToolError, match=r"find: BFCL's call needed more than 1,024 MiB"):
            await state.call("find", {"path": "Y30"})
        assert state.pickled == before
        assert "current_working_directory" in await state.call("pwd", {})  # the cell goes on


def test_a_grading_that_meets_the_memory_limit_gives_a_verdict() -> None:
    e = data.entry(ENTRY)
    names = [f["name"] for f in e.all_functions()]
    steps = [[call] for call in branching_tree(30)] + [[("find", {"path": "Y30"})]]
    turns = [steps] + [[] for _ in e.ground_truth[1:]]
    with using(BfclWorkers()):
        verdict = grade_multi_turn(e.raw, names, e.ground_truth, turns)
    assert not verdict.passed
    assert verdict.error_type is not None
