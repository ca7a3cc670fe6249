"""A fresh BFCL worker's warm-up counted against the call's own limit (issue 34, adversary
round 20, part A).

A BFCL call has 10 s (``CALL_TIME_LIMIT_S``); a new worker first imports BFCL's modules, which
the module's docs say is "outside that call's limit" (it has ``WARM_UP_LIMIT_S`` of its own).
The call's deadline was taken before the worker was started and warmed, so on a loaded machine
a plain ``get_stock_info`` in a fresh worker came back ``error: get_stock_info: BFCL's call
took over 10 s and was stopped``, told to the model: found replaying ``bfcl_multi_turn`` at
``--concurrency 16`` (16 workers warming at once, load 9 on 2 cores; 2 to 5 mock cells of 6
stored other transcripts and token counts than a quiet replay, 3 runs in 3). Here a limit of
0.3 s: shorter than a fresh worker's start and imports, longer than a warm call."""

from __future__ import annotations

import asyncio
import math
import time

import pytest

from harness.grading._bfcl_worker import BfclWorkers


@pytest.mark.timeout(180)
@pytest.mark.parametrize("how", ["async", "thread"])
def test_a_fresh_workers_warm_up_is_not_the_calls_time(how: str) -> None:
    workers = BfclWorkers()
    try:
        began = time.monotonic()
        if how == "async":
            got = asyncio.run(workers.call(math.sqrt, 16.0, timeout_s=0.3))
        else:
            got = workers.call_sync(math.sqrt, 16.0, timeout_s=0.3)
        assert time.monotonic() - began > 0.3  # the warm-up alone took longer than the limit
        assert got == 4.0  # TimeoutError on 218441d
    finally:
        workers.kill_all()
