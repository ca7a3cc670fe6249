"""The run's executor as :func:`harness.bench.run_bench` drives it (:class:`Guarded`): what a
plug-in executor's ``run`` does that would end or hang ``harness run`` becomes an ending the run
can state.

- ``run`` raising ``asyncio.CancelledError`` of its own (the run was not cancelled): before, a
  traceback and exit 1; now the executor "raised CancelledError", the run ``failed``, exit 3.
- ``run`` raising ``KeyboardInterrupt`` or ``SystemExit``: inside the event loop's task these
  left it at once ("Task exception was never retrieved" and a traceback at exit, the run
  closed ``failed`` with no resume command). ``KeyboardInterrupt`` now stops the run as Ctrl-C
  does (interrupted, exit 130, the resume command); ``SystemExit``, ``GeneratorExit`` or a
  ``BaseException`` of its own is a crash of the executor (they were a traceback, exit 1).
- ``run`` never returning once every cell of the run was stored: ``harness run`` waited until
  two Ctrl-C. Past :data:`RETURN_GRACE_S` after the last cell was stored, the run stops waiting
  for it (a warning says so) and ends as usual.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from typing import Any

from harness.bench._matrix import Cell
from harness.bench._outcome import Executor, MatrixSummary, OnOutcome
from harness.bench._stored import StoredCells

__all__ = ["RETURN_GRACE_S", "Guarded"]

log = logging.getLogger("harness.bench")

#: How long an executor's ``run`` may take to return once every cell of the run was stored (the
#: Ray executor closes its actors then, up to 10 s).
RETURN_GRACE_S = 60.0
_POLL_S = 0.2


class _ExecutorRaised(Exception):
    """The executor's ``run`` raised what would not end as an ``Exception`` (its own
    cancellation, ``SystemExit``): ``original`` is what it raised."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(str(original))
        self.original = original


class Guarded:
    """``inner`` with its ``run`` guarded (see the module docs); ``request_stop`` is passed on."""

    def __init__(self, inner: Executor, stored: StoredCells, name: str) -> None:
        self.inner = inner
        self.stored = stored
        self.name = name

    def request_stop(self) -> None:
        self.inner.request_stop()

    async def run(self, cells: Sequence[Cell], on_outcome: OnOutcome | None = None) -> Any:
        running = asyncio.ensure_future(self._run(cells, on_outcome))
        try:
            while True:
                done, _ = await asyncio.wait({running}, timeout=_POLL_S)
                if done:
                    return running.result()
                since = self.stored.complete_since
                if since is not None and time.monotonic() - since > RETURN_GRACE_S:
                    log.warning(
                        "harness: the executor %r stored every cell but its run did not "
                        "return within %gs of the last one; stopped waiting for it",
                        self.name, RETURN_GRACE_S,
                    )  # fmt: skip
                    running.cancel()
                    return MatrixSummary(total=len(cells))
        except asyncio.CancelledError:
            running.cancel()
            raise

    async def _run(self, cells: Sequence[Cell], on_outcome: OnOutcome | None) -> Any:
        try:
            return await self.inner.run(cells, on_outcome)
        except KeyboardInterrupt:
            log.warning(
                "harness: the executor %r raised KeyboardInterrupt: the run stops as on Ctrl-C",
                self.name,
            )
            return MatrixSummary(total=len(cells), interrupted=True)
        except asyncio.CancelledError as exc:
            task = asyncio.current_task()
            if task is not None and task.cancelling():  # the run cancelled it: go on up
                raise
            raise _ExecutorRaised(exc) from None
        except Exception:
            raise
        except BaseException as exc:  # SystemExit, GeneratorExit, a BaseException of its own
            raise _ExecutorRaised(exc) from None
