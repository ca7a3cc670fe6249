"""The cells a run stored, once each, and the run's summary counted from them (not from what its
executor returns: :class:`StoredCells`)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

from harness.bench._matrix import Cell
from harness.bench._outcome import CellOutcome, MatrixSummary

__all__ = ["StoredCells"]

log = logging.getLogger("harness.bench")


class StoredCells:
    """The cells a run's sink stored, once each: the run's summary counts these, whatever the
    executor returns (an executor plug-in that called the sink twice stored duplicate rows; one
    that returned a made-up summary made ``harness run`` print "0/4 cells, 4 passed", exit 0)."""

    def __init__(self, keys: set[str]) -> None:
        self.keys = keys
        self.outcomes: dict[str, CellOutcome] = {}
        self._lock = threading.Lock()

    def admit(self, outcome: CellOutcome) -> bool:
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

    def summary(self, told: MatrixSummary, cells: Sequence[Cell], executor: str) -> MatrixSummary:
        """The run's summary counted from the stored cells; a cell the executor never handed in
        (and not left by an interruption or a full disk) is an error cell of the summary."""
        with self._lock:
            outcomes = dict(self.outcomes)
        counted = MatrixSummary(
            total=len(cells), interrupted=told.interrupted, elapsed_s=told.elapsed_s
        )
        for cell in cells:
            if cell.key in outcomes:
                counted.count(outcomes[cell.key])
        missing = [c.key for c in cells if c.key not in outcomes]
        if told.interrupted or told.skipped:
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
