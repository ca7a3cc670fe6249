"""Run matrix cells concurrently, grade them, and hand each finished row to a sink.

Each cell gets a fresh workspace (a temporary directory, removed afterwards; made only when a
tool uses it unless the task seeds files or grades the folder) and, for HTTP
providers, its own cassette transport, so concurrent cells never share recordings. A cell that
crashes becomes a failed row carrying the error; the matrix goes on. Rows reach the sink as each
cell finishes, so an interrupted run keeps everything it finished. Stopping (``request_stop()``,
which the CLI calls on Ctrl-C) schedules nothing new and cancels the cells in flight; they are not
recorded, so ``--resume`` runs them again.
"""

from __future__ import annotations

import asyncio
import collections
import shlex
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from harness.api import adiscard, aresume, arun
from harness.bench._matrix import Cell
from harness.cassettes._transport import CassetteTransport, profile_secrets
from harness.core._result import Result
from harness.core._terminations import FinishReason
from harness.grading import _python as python_grader
from harness.grading._base import grade
from harness.grading._grade import Grade
from harness.suites._suite import Task

#: A cell's status (the ``results.status`` column).
CellStatus = Literal["passed", "failed", "error"]
#: Endings that come from the provider, its transport or the kernel, never from the model:
#: error_during_execution (a provider error after retries, a cassette miss, an internal error)
#: and error_provider_auth.
_INFRA_ENDINGS = frozenset({FinishReason.ERROR_DURING_EXECUTION, FinishReason.ERROR_PROVIDER_AUTH})

__all__ = [
    "CellOutcome",
    "CellStatus",
    "Executor",
    "MatrixSummary",
    "Runner",
    "RunnerOptions",
    "Sink",
    "apply_approvals",
    "rerecord_command",
]


@dataclass(slots=True)
class CellOutcome:
    """What one cell produced: a graded Result, or the error that kept it from running."""

    cell: Cell
    cassette: Path | None
    result: Result | None = None
    grade: Grade | None = None
    error: str | None = None

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def status(self) -> CellStatus:
        """``passed``/``failed`` (the model's behaviour was graded), or ``error``: the cell
        could not be scored for a reason outside the model (see :func:`error_cause`)."""
        if self.error_cause is not None:
            return "error"
        return "passed" if self.grade is not None and self.grade.passed else "failed"

    @property
    def error_cause(self) -> str | None:
        """Why the cell could not be scored, or None: the runner crashed, the provider or its
        transport failed (cassette missing or corrupt, key, auth, 5xx after retries, garbage),
        the kernel hit an internal error, or the grader crashed, timed out or was not found."""
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
        return None

    def _expected_ending(self, result: Result) -> bool:
        """A ``finish_reason`` grader that names this ending (a task about fault handling, e.g.
        a scripted 401) scores the cell: the ending is what the task is about."""
        names = getattr(self.cell.task.expect, "names_ending", None)
        return callable(names) and bool(names(result.finish_reason.value))

    @property
    def cost_usd(self) -> float:
        return (self.result.cost_usd or 0.0) if self.result is not None else 0.0


class Sink(Protocol):
    """Receives each finished cell (the CLI's sink writes it to the store right away)."""

    def __call__(self, outcome: CellOutcome) -> None: ...


@dataclass(slots=True)
class RunnerOptions:
    cassettes: Path = Path("cassettes")
    record_mode: str = "none"
    concurrency: int = 4
    #: Cells at once per provider; default: ``concurrency`` when replaying, 1 when recording
    #: (a local model server answers one request at a time anyway).
    provider_concurrency: int | None = None
    tracer_provider: Any = None
    #: Hosts never recorded into cassettes (the OTLP collector, ...).
    ignore_hosts: tuple[str, ...] = ()
    run_id: str | None = None
    #: Where cells' workspaces go (the run folder, see harness.bench._rundir); default: $TMPDIR.
    work_root: Path | None = None
    #: An ``asyncio.Semaphore`` shared by runs in one process (a Ray worker overlaps its
    #: batches under one ``concurrency`` limit); None: this run's ``concurrency`` alone.
    slots: Any = None


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

    def count(self, outcome: CellOutcome) -> None:
        """Add one finished cell (already handed to the sink) to the tallies."""
        self.done += 1
        if outcome.error is not None:
            self.crashed += 1
        status = outcome.status
        if status == "error":
            self.errored += 1
            self.errors.append(f"{outcome.cell.key}: {outcome.error_cause}")
        elif status == "passed":
            self.passed += 1
        else:
            self.failed += 1
        self.cost_usd += outcome.cost_usd

    @property
    def cells_per_s(self) -> float:
        return self.done / self.elapsed_s if self.elapsed_s > 0 else 0.0


OnOutcome = Callable[[CellOutcome, MatrixSummary], None]


class Executor(Protocol):
    """What runs a matrix: :class:`Runner` (this process) or the Ray executor
    (:class:`harness.bench._ray_executor.RayRunner`). ``run`` hands every finished cell to the
    sink it was built with, once, and returns when all are done or ``request_stop()`` stopped it
    (then ``summary.interrupted`` is set and the cells not handed over are not recorded)."""

    def request_stop(self) -> None: ...

    async def run(
        self, cells: Sequence[Cell], on_outcome: OnOutcome | None = None
    ) -> MatrixSummary: ...


class Runner:
    def __init__(self, options: RunnerOptions, sink: Sink) -> None:
        self.options = options
        self.sink = sink
        self._stop = asyncio.Event()
        # id(task) -> (task, whether its grader reads the workspace); the task is kept so that
        # its id stays unique.
        self._workspace_graders: dict[int, tuple[Task, bool]] = {}
        self._reaper: ThreadPoolExecutor | None = None

    def request_stop(self) -> None:
        """Schedule no new cell and cancel the cells in flight."""
        self._stop.set()
        python_grader.terminate_all()  # a grader stuck in a loop must not hold up the exit

    async def run(
        self, cells: Sequence[Cell], on_outcome: OnOutcome | None = None
    ) -> MatrixSummary:
        """Run ``cells`` with ``concurrency`` workers; returns when all are done or stopped."""
        opts = self.options
        summary = MatrixSummary(total=len(cells))
        python_grader.reset()
        started = time.perf_counter()
        # Workspaces are removed by a thread: deleting files is mostly waiting on the disk.
        self._reaper = ThreadPoolExecutor(1, thread_name_prefix="harness-rm")
        queue = collections.deque(cells)
        per_provider: dict[str, asyncio.Semaphore] = {}
        recording = opts.record_mode != "none"

        def provider_slot(cell: Cell) -> asyncio.Semaphore:
            if cell.provider not in per_provider:
                n = opts.provider_concurrency
                if n is None:
                    n = 1 if recording and not cell.is_mock else opts.concurrency
                per_provider[cell.provider] = asyncio.Semaphore(n)
            return per_provider[cell.provider]

        def record(outcome: CellOutcome) -> None:
            self.sink(outcome)
            summary.count(outcome)
            if on_outcome is not None:
                on_outcome(outcome, summary)

        async def worker() -> None:
            while queue and not self._stop.is_set():
                cell = queue.popleft()
                async with provider_slot(cell):
                    if opts.slots is None:
                        outcome = await self._cell(cell)
                    else:
                        async with opts.slots:
                            outcome = await self._cell(cell)
                record(outcome)
                # Cells on the in-process mock never suspend: yield so the loop can run
                # timers and signal handlers (Ctrl-C) between cells.
                await asyncio.sleep(0)

        if not cells:
            return summary
        workers = [asyncio.create_task(worker()) for _ in range(min(opts.concurrency, len(cells)))]
        stopper = asyncio.create_task(self._stop.wait())
        try:
            done: set[asyncio.Task[Any]] = set()
            pending = list(workers)
            while stopper not in done and pending:
                # Only the workers still running: a finished one would return at once (a busy
                # loop while the last cells finish).
                done, _ = await asyncio.wait(
                    [*pending, stopper], return_when=asyncio.FIRST_COMPLETED
                )
                pending = [w for w in workers if not w.done()]
            if stopper in done:
                summary.interrupted = bool(queue) or not all(w.done() for w in workers)
                for w in workers:
                    w.cancel()
            results = await asyncio.gather(*workers, return_exceptions=True)
            for value in results:
                if isinstance(value, BaseException) and not isinstance(
                    value, asyncio.CancelledError
                ):
                    raise value
        finally:
            stopper.cancel()
            python_grader.close()  # idle grader workers
            self._reaper.shutdown(wait=True)
            summary.elapsed_s = time.perf_counter() - started
            summary.skipped = summary.total - summary.done
        return summary

    def _transport(self, cell: Cell, cassette: Path) -> CassetteTransport:
        opts = self.options
        return CassetteTransport(
            cassette,
            record_mode=opts.record_mode,
            rerecord_hint=rerecord_command(cell),
            secrets=profile_secrets(cell.provider),
            ignore_hosts=opts.ignore_hosts,
            drop_unused_requests=opts.record_mode == "all",
            metadata=recording_metadata(cell),
        )

    async def _cell(self, cell: Cell) -> CellOutcome:
        opts = self.options
        task = cell.task
        root = opts.work_root
        # A folder in the run folder when the task seeds files or its grader reads the folder
        # after the run; otherwise the kernel makes a temporary workspace ($TMPDIR/harness-ws-*)
        # if and when a tool touches a file, and removes it (most such cells never do).
        workspace: Path | None = None
        if self._reads_workspace(task):
            workspace = Path(
                tempfile.mkdtemp(prefix="cell-" if root else "harness-cell-", dir=root)
            )
        cassette = cell.cassette(opts.cassettes)
        transport: CassetteTransport | None = None
        try:
            if cassette is None:
                provider_opts: dict[str, Any] = task.mock_provider_opts(cell.mode) or {}
            else:
                transport = self._transport(cell, cassette)
                provider_opts = {"transport": transport}
            result = await arun(
                task.prompt,
                provider=cell.provider,
                mode=cell.mode,
                cwd=workspace,
                provider_opts=provider_opts,
                seed=cell.epoch,
                tracer_provider=opts.tracer_provider,
                trace_attributes={
                    "harness.suite": cell.suite.suite,
                    "harness.task": task.id,
                    "harness.mode": cell.mode,
                    "harness.provider": cell.provider,
                    "harness.epoch": cell.epoch,
                    **({"harness.bench.run_id": opts.run_id} if opts.run_id else {}),
                },
                **task.run_options(),
            )
            result = await apply_approvals(task, result)
            if task.expect.needs("records_calls"):  # a judge's calls go in the cell's cassette
                if transport is None:
                    cassette = cell.cassette(opts.cassettes, judge=True)
                    assert cassette is not None
                    transport = self._transport(cell, cassette)
                transport.reopen()
            try:
                verdict = await _grade(task, result, workspace, transport)
            finally:
                if transport is not None:
                    await transport.aclose()
            return CellOutcome(cell, cassette, result, verdict)
        except asyncio.CancelledError:
            me = asyncio.current_task()
            if self._stop.is_set() or me is None or me.cancelling():
                raise
            # Not cancelled by us: a cancellation leaked from inside the cell (a timeout in a
            # tool, say). It must not end the worker and silently drop the cell.
            return CellOutcome(cell, cassette, error="CancelledError: leaked from the cell")
        except Exception as exc:  # a crashing cell is a failed outcome; the matrix goes on
            return CellOutcome(cell, cassette, error=f"{type(exc).__name__}: {exc}")
        finally:
            if workspace is not None:
                reaper = self._reaper
                if reaper is None:
                    shutil.rmtree(workspace, ignore_errors=True)
                else:
                    reaper.submit(shutil.rmtree, workspace, True)

    def _reads_workspace(self, task: Task) -> bool:
        """Whether ``task`` needs a workspace folder: it seeds files, or its grader reads the
        folder after the run (file_contains, python)."""
        key = id(task)
        found = self._workspace_graders.get(key)
        if found is None:
            files = task.workspace is not None and bool(task.workspace.files)
            reads = task.expect.needs("reads_workspace")
            found = self._workspace_graders[key] = (task, files or reads)
        return found[1]


async def apply_approvals(task: Task, result: Result) -> Result:
    """Answer ``interrupt_before`` pauses with the task's scripted ``approvals``, in order; a
    pause with none left stays ``interrupted`` (the run is released)."""
    approvals = list(task.approvals)
    while result.finish_reason is FinishReason.INTERRUPTED and result.pending_tool_calls:
        pending = result.pending_tool_calls
        if len(approvals) < len(pending):
            await adiscard(result)
            return result
        decisions = {call.id: approvals.pop(0) for call in pending}
        result = await aresume(result, decisions=decisions)
    return result


async def _grade(task: Task, result: Result, workspace: Path | None, cassette: Any) -> Grade:
    """Grade a cell; slow graders (child processes or model calls that may take seconds) in a
    thread, so the other cells and Ctrl-C are not held up."""
    expect, on_error = task.expect, task.grade_on_error
    if expect.needs("slow"):
        return await asyncio.to_thread(
            grade, expect, result, workspace, grade_on_error=on_error, cassette=cassette
        )
    return grade(expect, result, workspace, grade_on_error=on_error)


def recording_metadata(cell: Cell) -> dict[str, Any]:
    """What a recorded cassette says about how it was recorded (vcrpy cassette metadata)."""
    from harness.providers._profiles import resolve_profile

    profile, model = resolve_profile(cell.provider)
    seeds = {
        "honoured": f"the server honours seeds: this cell sent seed={cell.epoch}",
        "ignored": "the server ignores request seeds: epochs are independent samples that a "
        "re-recording will not reproduce",
        "unknown": "whether the server honours seeds was not checked",
    }[profile.seeds]
    return {
        "harness": {
            "provider": cell.provider,
            "kind": profile.kind,
            "model": model,
            "tool_calls": profile.tool_calls,
            "epoch": cell.epoch,
            "seeds": profile.seeds,
            "seed_note": seeds,
        }
    }


def rerecord_command(cell: Cell) -> str:
    suite = str(cell.suite.source) if cell.suite.source else f"suites/{cell.suite.suite}.yaml"
    return shlex.join(
        [
            "harness", "run", suite,
            "--providers", cell.provider,
            "--modes", cell.mode,
            "--tasks", cell.task.id,
            "--epochs", str(cell.epoch + 1),
            "--record-mode", "all",
        ]
    )  # fmt: skip
