"""A run's liveness lock (round 21, the lead: ``runs/_alive/<digest>.lock``, held by the run's
process for the run's life) is asked by taking it shared for a moment (``alive``). A run that
starts or resumes in that moment cannot take it (``LOCK_EX | LOCK_NB``): ``AliveLock.hold``
gives up at once, and from then on every writer's ``recover_stale_runs`` and ``baseline save``
find the lock file there and free, so the live run counts as dead: closed as ``interrupted``
while it runs (adversary round 22, part B; a race of microseconds, shown here by holding the
probe's lock while the run takes its own)."""

from __future__ import annotations

import fcntl
import os
import threading
from pathlib import Path

import pytest

from harness.store._alive import AliveLock, alive


@pytest.mark.xfail(
    strict=True,
    reason="round 22: lead fixes AliveLock.hold (harness/store/_alive.py): on EWOULDBLOCK, "
    "try again for a while (a probe holds the lock shared for microseconds) before giving up",
)
@pytest.mark.timeout(60)
def test_a_run_starting_while_its_lock_is_probed_still_holds_it(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    first = AliveLock.hold(runs, "R1")  # the run's first life: the lock file is made
    assert first is not None
    first.release()
    (path,) = (runs / "_alive").iterdir()
    probe = os.open(path, os.O_RDONLY)
    fcntl.flock(probe, fcntl.LOCK_SH | fcntl.LOCK_NB)  # another process asks, at that moment
    done = threading.Timer(0.2, os.close, [probe])  # and lets go
    done.start()
    try:
        lock = AliveLock.hold(runs, "R1")  # the run resumes
    finally:
        done.join()
    try:
        assert lock is not None
        assert alive(runs, "R1") is True  # False: every writer closes the live run
    finally:
        if lock is not None:
            lock.release()
