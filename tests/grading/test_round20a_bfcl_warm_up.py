"""A fresh BFCL worker's warm-up counted against the call's own limit (issue 34, adversary
round 20, part A).

A BFCL call has 10 s (``CALL_TIME_LIMIT_S``); a new worker first imports BFCL's modules, which
the module's docs say is "outside that call's limit" (it has ``WARM_UP_LIMIT_S`` of its own).
The call's deadline was taken before the worker was started and warmed, so on a loaded machine
a plain ``get_stock_info`` in a fresh worker came back ``error: get_stock_info: BFCL's call
took over 10 s and was stopped``, told to the model: found replaying ``bfcl_multi_turn`` at
``--concurrency 16`` (16 workers warming at once, load 9 on 2 cores; 2 to 5 mock cells of 6
stored other transcripts and token counts than a quiet replay, 3 runs in 3).

Here the warm-up is made to last :data:`_WARM_S` more than the worker's own (its future is
finished that much later), longer than the call's limit of :data:`_LIMIT_S`, which a warm call
of ``sqrt`` needs a few milliseconds of. The first version of this test relied on a real
warm-up lasting over 0.3 s; on a quiet machine it took 0.29 s (the lead, stop 46)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import math
import threading
from typing import Any

import pytest

from harness.grading import _bfcl_worker
from harness.grading._bfcl_worker import BfclWorkers

_LIMIT_S = 4.0
_WARM_S = 6.0


class _SlowWarming(_bfcl_worker._Lease):
    def __init__(self, worker: Any, warming: concurrent.futures.Future[None] | None) -> None:
        if warming is not None:
            late: concurrent.futures.Future[None] = concurrent.futures.Future()

            def finish(real: concurrent.futures.Future[None]) -> None:
                def done() -> None:
                    if real.exception() is not None:
                        late.set_exception(real.exception())
                    else:
                        late.set_result(None)

                threading.Timer(_WARM_S, done).start()

            warming.add_done_callback(finish)
            warming = late
        super().__init__(worker, warming)


@pytest.mark.timeout(180)
@pytest.mark.parametrize("how", ["async", "thread"])
def test_a_fresh_workers_warm_up_is_not_the_calls_time(
    how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_bfcl_worker, "_Lease", _SlowWarming)
    workers = BfclWorkers()
    try:
        if how == "async":
            got = asyncio.run(workers.call(math.sqrt, 16.0, timeout_s=_LIMIT_S))
        else:
            got = workers.call_sync(math.sqrt, 16.0, timeout_s=_LIMIT_S)
        assert got == 4.0  # TimeoutError on 218441d
    finally:
        workers.kill_all()
