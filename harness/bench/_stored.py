"""The cells a run stored, once each, and the run's summary counted from them (not from what its
executor returns: :class:`StoredCells`)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import cast

from harness._plugins import described
from harness.bench._matrix import Cell
from harness.bench._outcome import CellOutcome, MatrixSummary
from harness.core._result import Result

__all__ = ["StoredCells", "crashed_executor"]

log = logging.getLogger("harness.bench")


class StoredCells:
    """The cells a run's sink stored, once each: the run's summary counts these, whatever the
    executor returns (an executor plug-in that called the sink twice stored duplicate rows; one
    that returned a made-up summary made ``harness run`` print "0/4 cells, 4 passed", exit 0).
    What is not a cell's outcome (a string, ``None``, an outcome whose ``result`` is not a
    :class:`~harness.core._result.Result`) is refused with a warning, and a cell never handed in
    is an error cell of the summary (round 7: such hand-ins, or a ``run`` that returned ``None``,
    ended ``harness run`` with a traceback, exit 1)."""

    def __init__(self, keys: set[str]) -> None:
        self.keys = keys
        self.outcomes: dict[str, CellOutcome] = {}
        self._lock = threading.Lock()

    def admit(self, outcome: object) -> bool:
        """Whether to store ``outcome`` (a cell of this run, handed in for the first time)."""
        problem = _not_an_outcome(outcome)
        if problem is not None:
            log.warning("harness: the executor handed in %s; not stored", problem)
            return False
        assert isinstance(outcome, CellOutcome)
        key = outcome.cell.key
        with self._lock:
            if key not in self.keys or key in self.outcomes:
                why = "again" if key in self.outcomes else "for a cell this run does not have"
                log.warning("harness: the executor handed in %s %s; not stored", key, why)
                return False
            self.outcomes[key] = outcome
            return True

    def forget(self, outcome: CellOutcome) -> None:
        with self._lock:
            self.outcomes.pop(outcome.cell.key, None)

    def summary(
        self, told: object, cells: Sequence[Cell], executor: str, elapsed_s: float
    ) -> MatrixSummary:
        """The run's summary counted from the stored cells (``elapsed_s``: the run's own clock);
        a cell the executor never handed in (and not left by an interruption or a full disk)
        is an error cell of the summary. ``told``, what the executor returned, is believed only
        on whether it was interrupted, and only when some cells are missing."""
        if not isinstance(told, MatrixSummary):
            log.warning(
                "harness: the executor %r returned %s, not a MatrixSummary: the summary counts "
                "what was stored", executor, type(told).__name__,
            )  # fmt: skip
            told = MatrixSummary(total=len(cells))
        with self._lock:
            outcomes = dict(self.outcomes)
        missing = [c.key for c in cells if c.key not in outcomes]
        counted = MatrixSummary(
            total=len(cells), interrupted=bool(told.interrupted and missing), elapsed_s=elapsed_s
        )
        for cell in cells:
            if cell.key in outcomes:
                counted.count(outcomes[cell.key])
        if counted.interrupted or (told.skipped and missing):
            counted.skipped = len(missing)
        elif missing:
            counted.errored += len(missing)
            counted.errors += [
                f"{key}: the executor {executor!r} never handed in its result (not stored)"
                for key in missing
            ]
        if (told.done, told.passed, told.failed) != (counted.done, counted.passed, counted.failed):
            log.warning(
                "harness: the executor %r reported %d/%d cells (%d passed); %d were stored "
                "(%d passed): the summary counts what was stored",
                executor, told.done, told.total, told.passed, counted.done, counted.passed,
            )  # fmt: skip
        return counted


def _not_an_outcome(value: object) -> str | None:
    """What is wrong with ``value`` as a cell's outcome, or None."""
    if not isinstance(value, CellOutcome):
        return f"{type(value).__name__}, not a CellOutcome"
    # A plug-in's outcome holds whatever it put there, whatever the annotations say.
    cell = cast(object, value.cell)
    if not isinstance(cell, Cell):
        return f"an outcome whose cell is {type(cell).__name__}, not a Cell"
    result = cast(object, value.result)
    if result is not None and not isinstance(result, Result):
        return f"an outcome of {cell.key} whose result is {type(result).__name__}, not a Result"
    return None


def crashed_executor(executor: str, exc: BaseException) -> str:
    """The run's error when its executor raised mid-run."""
    return f"the executor {executor!r} raised {described(exc)}"
