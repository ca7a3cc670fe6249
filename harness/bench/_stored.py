"""The cells a run stored, once each, and the run's summary counted from them (not from what its
executor returns: :class:`StoredCells`).

The summary counts what each cell's row said when it was stored, for the run's own list of
cells: an executor plug-in that emptied the list it was given made ``harness run`` print "0/0
cells", exit 0, with a failed cell in the store; one that turned a failed outcome into a pass
after handing it in printed "2 passed". An outcome whose cost is not a finite number of dollars,
0 or more, makes no row (it printed ``cost $nan``)."""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from harness._plugins import described
from harness.bench._matrix import Cell
from harness.bench._outcome import CellOutcome, MatrixSummary, Tally
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

    def __init__(self, cells: Sequence[Cell]) -> None:
        #: The run's cells (its own copy: the executor gets another list).
        self.cells = tuple(cells)
        self.keys = {c.key for c in self.cells}
        #: The outcomes handed in and taken (being stored, or stored).
        self.outcomes: dict[str, CellOutcome] = {}
        #: What each stored cell's row said, when it was stored.
        self.tallies: dict[str, Tally] = {}
        #: When the last of the run's cells was stored (``time.monotonic()``), or None.
        self.complete_since: float | None = None
        self._lock = threading.Lock()
        #: Held while an outcome is stored; ``closed`` once the run's summary is counted.
        self._writing = threading.RLock()
        self.closed = False

    def taking(self, sink: Callable[[Any], None]) -> Callable[[Any], None]:
        """``sink`` as the executor gets it: one outcome at a time (a plug-in may call it from
        threads of its own), and none once the run's summary is counted. An executor's thread
        handing cells in after its ``run`` returned stored rows the summary called "never
        handed in" (exit 3), as the run closed and compacted (adversary round 20, part A)."""

        def take(outcome: Any) -> None:
            with self._writing:
                if not self.closed:
                    sink(outcome)
                    return
            cell = getattr(outcome, "cell", None)
            what = cell.key if isinstance(cell, Cell) else type(outcome).__name__
            log.warning("harness: the executor handed in %s after its run ended; not stored", what)

        return take

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

    def stored(self, outcome: CellOutcome, row: Mapping[str, Any]) -> None:
        """``outcome``'s row was stored: count what the row says (the executor may change its
        outcome after handing it in; the store keeps the row)."""
        tally = Tally(
            row["status"],
            row.get("error"),
            outcome.error is not None,
            int(row.get("drift") or 0),
            outcome.drift_note,
            float(row.get("cost_usd") or 0.0),
        )
        with self._lock:
            self.tallies[outcome.cell.key] = tally
            if len(self.tallies) == len(self.keys):
                self.complete_since = time.monotonic()

    def summary(self, told: object, executor: str, elapsed_s: float) -> MatrixSummary:
        """The run's summary counted from the stored cells (``elapsed_s``: the run's own clock);
        a cell the executor never handed in (and not left by an interruption or a full disk)
        is an error cell of the summary. ``told``, what the executor returned, is believed only
        on whether it was interrupted, and only when some cells are missing."""
        with self._writing:  # what is stored from now on would not be counted
            self.closed = True
        cells = self.cells
        if not isinstance(told, MatrixSummary):
            log.warning(
                "harness: the executor %r returned %s, not a MatrixSummary: the summary counts "
                "what was stored", executor, type(told).__name__,
            )  # fmt: skip
            told = MatrixSummary(total=len(cells))
        with self._lock:
            tallies = dict(self.tallies)
        missing = [c.key for c in cells if c.key not in tallies]
        counted = MatrixSummary(
            total=len(cells), interrupted=bool(told.interrupted and missing), elapsed_s=elapsed_s
        )
        for cell in cells:
            if cell.key in tallies:
                counted.count_cell(cell.key, tallies[cell.key])
        if counted.interrupted:  # skipped alone: a Ray batch stopped by a cell's Ctrl-C lost
            counted.skipped = len(missing)  # its cells, "2/4 cells", exit 0 (round 20, part A)
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
    drift = cast(object, value.drift)
    if not (isinstance(drift, int) and not isinstance(drift, bool) and drift >= 0):
        return f"an outcome of {cell.key} whose drift is {drift!r}, not a count of 0 or more"
    for what, cost in (
        ("result", getattr(result, "cost_usd", None)),
        ("grade", _grade_cost(value)),
    ):
        if cost is not None and not (isinstance(cost, int | float) and 0.0 <= cost < math.inf):
            return (
                f"an outcome of {cell.key} whose {what} costs {cost!r}, not a finite number "
                "of dollars, 0 or more"
            )
    return None


def _grade_cost(outcome: CellOutcome) -> object:
    return getattr(outcome.grade, "cost_usd", None) if outcome.grade is not None else None


def crashed_executor(executor: str, exc: BaseException) -> str:
    """The run's error when its executor raised mid-run (what it raised, when guarded:
    :class:`harness.bench._guard._ExecutorRaised`)."""
    exc = getattr(exc, "original", exc)
    return f"the executor {executor!r} raised {described(exc)}"
