"""What a matrix run hands out: each cell's :class:`CellOutcome` (to a :class:`Sink`, as the cell
finishes), the running :class:`MatrixSummary`, and the :class:`Executor` protocol that the local
runner and the Ray executor share."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, NamedTuple, Protocol

from harness.bench._matrix import Cell
from harness.core._result import Result
from harness.core._terminations import FinishReason
from harness.grading._grade import Grade
from harness.suites._approvals import Review

__all__ = [
    "CellOutcome",
    "CellStatus",
    "DriftPolicy",
    "Executor",
    "HeldSlot",
    "MatrixSummary",
    "OnOutcome",
    "Sink",
    "Tally",
]

#: A cell's status (the ``results.status`` column).
CellStatus = Literal["passed", "failed", "error"]
#: What a replayed request unlike its recording does to its cell: ``warn`` (counted in
#: ``results.drift`` and the run summary) or ``error`` (the cell is not scored).
DriftPolicy = Literal["warn", "error"]
#: Endings that come from the provider, its transport or the kernel, never from the model:
#: error_during_execution (a provider error after retries, a cassette miss, an internal error)
#: and error_provider_auth.
_INFRA_ENDINGS = frozenset({FinishReason.ERROR_DURING_EXECUTION, FinishReason.ERROR_PROVIDER_AUTH})


@dataclass(slots=True)
class CellOutcome:
    """What one cell produced: a graded Result, or the error that kept it from running."""

    cell: Cell
    cassette: Path | None
    result: Result | None = None
    grade: Grade | None = None
    error: str | None = None
    #: Replayed requests that differed from their recording (see ``CassetteTransport``), and
    #: where the first one differed.
    drift: int = 0
    drift_note: str | None = None
    #: ``drift`` makes the cell an error (``harness run --drift error``).
    drift_is_error: bool = False
    #: The scripted reviewer's decisions, each with the call as the model proposed it.
    reviews: list[Review] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def status(self) -> CellStatus:
        """``passed``/``failed`` (the model's behaviour was graded), or ``error``: the cell
        could not be scored for a reason outside the model (see :attr:`error_cause`)."""
        if self.error_cause is not None:
            return "error"
        return "passed" if self.grade is not None and self.grade.passed else "failed"

    @property
    def error_cause(self) -> str | None:
        """Why the cell could not be scored, or None: the runner crashed, the provider or its
        transport failed (cassette missing or corrupt, key, auth, 5xx after retries, garbage),
        the kernel hit an internal error, the grader crashed, timed out or was not found, or
        the replay drifted under ``--drift error``."""
        if self.error is not None:
            return self.error
        result = self.result
        if (
            result is not None
            and result.finish_reason in _INFRA_ENDINGS
            and not self._expected_ending(result)
        ):
            return f"{result.finish_reason.value}: {result.halted_reason or 'no detail'}"
        if self.grade is not None and self.grade.error:
            return f"grader: {self.grade.explanation}"
        if result is None or self.grade is None:
            return "no result"
        if self.drift and self.drift_is_error:
            return (
                f"drift: {self.drift} replayed request(s) differ from the recording "
                f"({self.drift_note}); re-record the cassette or run with --drift warn"
            )
        return None

    def _expected_ending(self, result: Result) -> bool:
        """A ``finish_reason`` grader that names this ending (a task about fault handling, e.g.
        a scripted 401) scores the cell: the ending is what the task is about."""
        names = getattr(self.cell.task.expect, "names_ending", None)
        return callable(names) and bool(names(result.finish_reason.value))

    @property
    def cost_usd(self) -> float:
        return (self.result.cost_usd or 0.0) if self.result is not None else 0.0


class Tally(NamedTuple):
    """What a run's summary counts of one cell: its status, why it could not be scored, whether
    it crashed, its drift and its cost."""

    status: CellStatus
    error: str | None
    crashed: bool = False
    drift: int = 0
    drift_note: str | None = None
    cost_usd: float = 0.0

    @classmethod
    def of(cls, outcome: CellOutcome) -> Tally:
        return cls(
            outcome.status,
            outcome.error_cause,
            outcome.error is not None,
            outcome.drift,
            outcome.drift_note,
            outcome.cost_usd,
        )


class Sink(Protocol):
    """Receives each finished cell (the CLI's sink writes it to the store right away)."""

    def __call__(self, outcome: CellOutcome, /) -> None: ...


@dataclass(slots=True)
class MatrixSummary:
    total: int
    done: int = 0
    passed: int = 0
    failed: int = 0
    #: Cells that could not be scored (status ``error``); not in passed or failed.
    errored: int = 0
    crashed: int = 0
    skipped: int = 0
    cost_usd: float = 0.0
    interrupted: bool = False
    elapsed_s: float = 0.0
    errors: list[str] = field(default_factory=list)
    #: Replayed requests that differed from their recordings, and the cells they were in.
    drift: int = 0
    drifted: list[str] = field(default_factory=list)

    def count(self, outcome: CellOutcome) -> None:
        """Add one finished cell (already handed to the sink) to the tallies."""
        self.count_cell(outcome.cell.key, Tally.of(outcome))

    def count_cell(self, key: str, tally: Tally) -> None:
        """Add the cell ``key`` as ``tally`` says (what was stored for it)."""
        self.done += 1
        if tally.crashed:
            self.crashed += 1
        if tally.drift:
            self.drift += tally.drift
            self.drifted.append(f"{key}: {tally.drift} ({tally.drift_note})")
        if tally.status == "error":
            self.errored += 1
            self.errors.append(f"{key}: {tally.error}")
        elif tally.status == "passed":
            self.passed += 1
        else:
            self.failed += 1
        self.cost_usd += tally.cost_usd

    @property
    def cells_per_s(self) -> float:
        return self.done / self.elapsed_s if self.elapsed_s > 0 else 0.0


OnOutcome = Callable[[CellOutcome, MatrixSummary], None]


class Executor(Protocol):
    """What runs a matrix: :class:`~harness.bench._runner.Runner` (this process) or the Ray
    executor (:class:`harness.bench._ray_executor.RayRunner`). ``run`` hands every finished cell
    to the sink it was built with, once, and returns when all are done or ``request_stop()``
    stopped it (then ``summary.interrupted`` is set and the cells not handed over are not
    recorded)."""

    def request_stop(self) -> None: ...

    async def run(
        self, cells: Sequence[Cell], on_outcome: OnOutcome | None = None
    ) -> MatrixSummary: ...


class HeldSlot:
    """A provider slot one cell holds: let go once, when its conversation ends or at its end."""

    def __init__(self, slot: asyncio.Semaphore) -> None:
        self._slot = slot
        self._held = False

    async def __aenter__(self) -> HeldSlot:
        await self._slot.acquire()
        self._held = True
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.let_go()

    def let_go(self) -> None:
        if self._held:
            self._held = False
            self._slot.release()
