"""Run matrix cells concurrently, grade them, and hand each finished row to a sink.

Each cell gets a fresh workspace (a temporary directory, removed afterwards; made only when a
tool uses it unless the task seeds files or grades the folder) and, for HTTP providers, its own
cassette transport, so concurrent cells never share recordings. A cell that crashes becomes a
failed row carrying the error; the matrix goes on. Rows reach the sink as each cell finishes,
so an interrupted run keeps everything it finished. Stopping (``request_stop()``, which the CLI
calls on Ctrl-C) schedules nothing new and cancels the cells in flight; they are not recorded,
so ``--resume`` runs them again.

A runner owns the processes its cells use: its python graders' warm workers (a
:class:`~harness.grading._pool.GraderPool`), grep's worker (a
:class:`~harness.tools._grep_worker.GrepWorker`, which its cells inherit through a context
variable) and BFCL's workers (:class:`~harness.grading._bfcl_worker.BfclWorkers`, likewise;
killed by :meth:`Runner.request_stop` with the graders). Stopping or closing one runner never
touches another's, so several runners may share a process (a Ray worker overlaps its batches).
"""

from __future__ import annotations

import asyncio
import collections
import shlex
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness._files import remove_tree
from harness._plugins import described
from harness.api import arun
from harness.bench._matrix import Cell
from harness.bench._outcome import (
    CellOutcome,
    CellStatus,
    DriftPolicy,
    Executor,
    HeldSlot,
    MatrixSummary,
    OnOutcome,
    Sink,
)
from harness.cassettes._transport import CassetteTransport, profile_secrets
from harness.core._result import Result
from harness.grading import _bfcl_worker
from harness.grading._base import agrade
from harness.grading._grade import Grade
from harness.grading._pool import GraderPool
from harness.suites._approvals import Review, apply_approvals
from harness.suites._sources import cell_options
from harness.suites._suite import Task
from harness.tools._grep_worker import GrepWorker, using

if TYPE_CHECKING:
    from opentelemetry.trace import TracerProvider

__all__ = [
    "CellOutcome",
    "CellStatus",
    "DriftPolicy",
    "Executor",
    "MatrixSummary",
    "OnOutcome",
    "Runner",
    "RunnerOptions",
    "Sink",
    "apply_approvals",
    "rerecord_command",
    "unsaved",
]


@dataclass(slots=True)
class RunnerOptions:
    cassettes: Path = Path("cassettes")
    record_mode: str = "none"
    concurrency: int = 4
    #: Cells at once per provider; default: ``concurrency`` when replaying, 1 when recording
    #: (a local model server answers one request at a time anyway). A cell holds its provider's
    #: slot while it talks to the model, not while it is graded (unless its grader calls a model).
    provider_concurrency: int | None = None
    tracer_provider: TracerProvider | None = None
    #: Hosts never recorded into cassettes (the OTLP collector, ...).
    ignore_hosts: tuple[str, ...] = ()
    run_id: str | None = None
    #: Where cells' workspaces go (the run folder, see harness.bench._rundir); default: $TMPDIR.
    work_root: Path | None = None
    #: An ``asyncio.Semaphore`` shared by runs in one process (a Ray worker overlaps its
    #: batches under one ``concurrency`` limit); None: this run's ``concurrency`` alone.
    slots: asyncio.Semaphore | None = None
    #: A replayed request unlike its recording: counted (``warn``) or an error cell (``error``).
    drift: DriftPolicy = "warn"


class Runner:
    def __init__(self, options: RunnerOptions, sink: Sink) -> None:
        self.options = options
        self.sink = sink
        self._stop = asyncio.Event()
        #: This runner's python-grader workers (killed by request_stop, closed when run ends).
        self.graders = GraderPool()
        #: BFCL's tool and grading workers (killed by request_stop, idle ones closed at the end).
        self.bfcl = _bfcl_worker.BfclWorkers()
        # id(task) -> (task, whether its grader reads the workspace); the task kept: unique id.
        self._workspace_graders: dict[int, tuple[Task, bool]] = {}
        self._reaper: ThreadPoolExecutor | None = None
        self._driver: asyncio.Task[Any] | None = None

    def request_stop(self) -> None:
        """Schedule no new cell and cancel the cells in flight."""
        self._stop.set()
        self.graders.kill_all()  # a grader stuck in a loop must not hold up the exit
        self.bfcl.kill_all()  # nor a BFCL call or grading computing on the model's numbers

    async def run(
        self, cells: Sequence[Cell], on_outcome: OnOutcome | None = None
    ) -> MatrixSummary:
        """Run ``cells`` with ``concurrency`` workers; returns when all are done or stopped."""
        # The cells' tasks and grading threads, created in them, inherit both.
        with using(GrepWorker()), _bfcl_worker.using(self.bfcl):
            return await self._run(cells, on_outcome)

    async def _run(self, cells: Sequence[Cell], on_outcome: OnOutcome | None) -> MatrixSummary:
        opts = self.options
        summary = MatrixSummary(total=len(cells))
        if not self._stop.is_set():
            self.graders.reset()
            self.bfcl.reset()
        started = time.perf_counter()
        self._driver = asyncio.current_task()
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

        async def step(cell: Cell) -> None:
            try:
                async with HeldSlot(provider_slot(cell)) as held:
                    if opts.slots is None:
                        outcome = await self._cell(cell, held.let_go)
                    else:
                        async with opts.slots:
                            outcome = await self._cell(cell, held.let_go)
            except asyncio.CancelledError:
                if self._not_ours() is None:
                    raise
                # A cell's code cancelling its worker as the next cell waited for a slot: that
                # cell, never started, was lost, exit 0 (adversary round 19, part A).
                queue.appendleft(cell)
                return
            if self._stop.is_set():  # it ended as the stop killed its BFCL and grader workers:
                raise asyncio.CancelledError  # stored failed, kept by --resume (round 20, A)
            record(outcome)
            # Cells on the mock never suspend: yield for timers and signal handlers (Ctrl-C).
            await asyncio.sleep(0)

        async def worker() -> None:
            while queue and not self._stop.is_set():
                try:  # a cell's code cancelling its worker later must not end the worker
                    await step(queue.popleft())
                except asyncio.CancelledError:
                    if self._not_ours() is None:
                        raise

        if not cells:
            return summary
        workers = [asyncio.create_task(worker()) for _ in range(min(opts.concurrency, len(cells)))]
        stopper = asyncio.create_task(self._stop.wait())
        try:
            pending = list(workers)
            while pending and not self._stop.is_set():
                # Only the workers still running: a finished one returns at once (a busy loop).
                await asyncio.wait([*pending, stopper], return_when=asyncio.FIRST_COMPLETED)
                if stopper.done() and not self._stop.is_set():
                    # Cancelled by a cell's code, not the stop: every running cell was
                    # cancelled and stored as its own code's cancel (adversary round 19, A).
                    stopper = asyncio.create_task(self._stop.wait())
                pending = [w for w in workers if not w.done()]
            if self._stop.is_set():
                # A worker cancelled by the stop left its cell unstored (a KeyboardInterrupt
                # raised in a cell stops the run so, after the last cell was taken).
                ended = all(w.done() and not w.cancelled() for w in workers)
                summary.interrupted = bool(queue) or not ended
                for w in workers:
                    w.cancel()
            for value in await asyncio.gather(*workers, return_exceptions=True):
                if value is not None and not isinstance(value, asyncio.CancelledError):
                    raise value  # a worker returns None
        finally:
            stopper.cancel()
            self.graders.close_idle()
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
            tolerate_drift=True,
        )

    async def _cell(
        self, cell: Cell, done_talking: Callable[[], None] = lambda: None
    ) -> CellOutcome:
        """Run and grade one cell; ``done_talking`` lets its provider slot go once the model
        is done (before grading, unless the grader calls a model too)."""
        opts = self.options
        task = cell.task
        root = opts.work_root
        # A folder in the run folder when the task seeds files or its grader reads the folder
        # after the run; otherwise the kernel makes a temporary workspace ($TMPDIR/harness-ws-*)
        # if and when a tool touches a file, and removes it (most such cells never do).
        workspace: Path | None = None
        cassette: Path | None = None
        transport: CassetteTransport | None = None
        result: Result | None = None
        try:  # a task source's Task or grader raising here crashed the executor (round 20, A)
            if self._reads_workspace(task):
                workspace = Path(
                    tempfile.mkdtemp(prefix="cell-" if root else "harness-cell-", dir=root)
                )
            cassette = cell.cassette(opts.cassettes)
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
                on_tool_timeout="end_run",  # a wall-clock expiry is the machine's, not the model's
                **(await cell_options(task)),
            )
            reviews: list[Review] = []
            result = await apply_approvals(task, result, reviews)
            if not task.expect.needs("records_calls"):
                # A grading calling no model (BFCL, a test command) frees the provider's slot.
                done_talking()
            else:  # a judge's calls go in the cell's cassette
                if transport is None:
                    cassette = cell.cassette(opts.cassettes, judge=True)
                    assert cassette is not None
                    transport = self._transport(cell, cassette)
                transport.reopen()
            try:
                verdict = await _grade(task, result, workspace, transport, self.graders)
            finally:
                if transport is not None:
                    await transport.aclose()
            if transport is not None and transport.save_error is not None:
                # Recorded but not saved (a full disk): not finished, so --resume records it.
                return CellOutcome(cell, cassette, error=unsaved(cassette, transport.save_error))
            outcome = CellOutcome(cell, cassette, result, verdict, reviews=reviews)
            if transport is not None and transport.drift:
                outcome.drift = transport.drift
                outcome.drift_note = transport.drift_notes[0]
                outcome.drift_is_error = opts.drift == "error"
            self._verdict_to_trace(result, outcome, verdict.score, task.expect.kind)
            return outcome
        except asyncio.CancelledError:
            why = self._not_ours()
            if why is None:
                raise
            return CellOutcome(cell, cassette, error=f"CancelledError: {why}")
        except KeyboardInterrupt:
            # Raised inside a cell (Ctrl-C reaches the CLI's runs as request_stop, so this is
            # a plug-in's own, or a Ctrl-C through the Python API): the run stops as
            # interrupted, finished cells kept; this one is not stored (--resume runs it).
            self.request_stop()
            raise asyncio.CancelledError from None
        except BaseException as exc:  # a crashing cell is a failed outcome; the matrix goes on.
            # A plug-in's SystemExit (it ended `harness run`: exit 0, cells lost) or its own;
            # its GeneratorExit (a task source's Task) ended the executor (round 20, part A).
            if isinstance(exc, GeneratorExit) and _closing():
                raise  # this coroutine is being closed (left behind, collected): not the cell's
            crashed = CellOutcome(cell, cassette, error=described(exc))
            self._verdict_to_trace(result, crashed, 0.0, task.expect.kind)
            return crashed
        finally:
            if workspace is not None:
                reaper = self._reaper
                if reaper is None:
                    remove_tree(workspace)
                else:
                    reaper.submit(remove_tree, workspace)

    def _not_ours(self) -> str | None:
        """Why a worker's ``CancelledError`` is not the stop's nor the run's end's (undone), or
        None. A tool cancelling its worker lost every cell, exit 0 (adversary round 18, A)."""
        me, driver = asyncio.current_task(), self._driver
        ending = driver is None or driver.done() or driver.cancelling() > 0
        if self._stop.is_set() or me is None or ending:
            return None
        why = "its code cancelled its task" if me.cancelling() else "leaked from the cell"
        while me.uncancel():
            pass
        return why

    def _verdict_to_trace(
        self, result: Result | None, outcome: CellOutcome, score: float, grader: str
    ) -> None:
        """The cell's verdict on its root span (held by the tracer until now; see
        harness.telemetry.record_verdict), so a trace backend can find failed cells."""
        provider = self.options.tracer_provider
        if provider is None or result is None or not result.trace_id:
            return
        from harness.telemetry import record_verdict

        status = outcome.status
        record_verdict(
            provider,
            result.trace_id,
            {
                "status": status,
                "passed": status == "passed",
                "score": score if status != "error" else 0.0,
                "grader": grader,
                "explanation": outcome.error_cause
                or (outcome.grade.explanation if outcome.grade else ""),
            },
        )

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


def _closing() -> bool:
    """Is the running coroutine being closed from outside an event loop (not run by one)?"""
    return asyncio.events._get_running_loop() is None


async def _grade(
    task: Task,
    result: Result,
    workspace: Path | None,
    cassette: CassetteTransport | None,
    pool: GraderPool,
) -> Grade:
    """Grade a cell: awaited on the runner's loop (a synchronous grader that says it is slow
    runs on a worker thread, so the other cells and Ctrl-C are not held up)."""
    return await agrade(
        task.expect,
        result,
        workspace,
        grade_on_error=task.grade_on_error,
        cassette=cassette,
        pool=pool,
    )


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


def unsaved(cassette: Path | None, exc: OSError) -> str:
    """The error of a cell whose recording could not be saved."""
    import errno

    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        why, fix = f"the disk is full ({exc.strerror or exc})", "make room"
    else:
        why, fix = str(exc), "fix that"
    return (
        f"cassette_not_saved: {cassette}: {why}; the recording is lost: {fix} and run it "
        "again (--resume records the cells not saved)"
    )
