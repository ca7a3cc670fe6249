"""A BFCL worker that dies while it runs a call (the system's OOM killer, a segfault in a
class's C code) is :class:`harness.errors.WorkerDied`, not a hang nor a raw
``BrokenProcessPool``; the next call gets a fresh worker."""

from __future__ import annotations

import os

import pytest

from harness.errors import HarnessError, WorkerDied
from harness.grading._bfcl_worker import current


@pytest.mark.timeout(300)  # a worker's warm-up imports BFCL: slow under load
def test_a_worker_dying_mid_call_is_worker_died_and_the_next_call_works() -> None:
    workers = current()
    with pytest.raises(WorkerDied, match="BFCL's worker process died") as caught:
        workers.call_sync(os._exit, 9, timeout_s=120)
    assert isinstance(caught.value, HarnessError)
    assert workers.call_sync(abs, -4, timeout_s=120) == 4
