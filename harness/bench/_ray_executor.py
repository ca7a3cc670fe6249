"""The Ray executor (``harness run --executor ray``): the matrix's cells run in batches on Ray
actors, and come back to this process (the driver) to be stored.

Each actor is a :class:`~harness.bench._ray_worker.CellWorker`: the ordinary asyncio runner with
its own ``--concurrency``; two batches are queued per actor and overlap under that one limit, so
an actor neither waits for the driver nor idles through a batch's last cells. A batch returns
its cells' Results and Grades and the span lines they wrote; the driver appends the spans to the
run's span file and hands each cell to the same sink as the local executor (so the rows take the
same store path, scrubbing included) and to the progress bar. Results go back to the driver:
workers need no shared storage, only the harness, the suites' python graders or tools and the
cassettes at the paths the driver sends.

Faults: an actor whose process dies is restarted by Ray (``max_restarts``) and its batches run
again (``max_task_retries``); the driver keeps the first copy of each cell key, so no cell is
lost or stored twice (spans of a lost attempt stay in the span file, matching no row). A batch
whose retries are exhausted, or whose actor stops answering (``liveness_s``), comes back as
crashed cells (status ``error``, exit 3, ``--retry-errors`` runs them again).
:meth:`RayRunner.request_stop` (Ctrl-C) submits nothing more and kills the actors: finished
batches are kept, the rest is left to ``--resume``.

This module imports Ray only when a run starts (:func:`import_ray`), so ``import harness`` and
the local executor never load it.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.bench._matrix import Cell
from harness.bench._outcome import CellOutcome, MatrixSummary, OnOutcome, Sink
from harness.bench._ray_cluster import _StoppedWhileStarting, connect, first_line
from harness.bench._ray_reaper import start_reaper
from harness.bench._ray_worker import Batch, CellSpec, CellWorker, WorkerOptions, spec_of
from harness.bench._runner import RunnerOptions
from harness.cassettes._secrets import Redactor
from harness.errors import ConfigError, DiskFull
from harness.store._diskfull import DiskPatience, append_whole_lines
from harness.suites._suite import Suite

if TYPE_CHECKING:
    from harness.bench._executors import ExecutorContext

__all__ = ["INSTALL_HINT", "RayOptions", "RayRunner", "import_ray", "ray_executor"]

log = logging.getLogger("harness.bench")

#: How to get Ray (the ``ray`` extra).
INSTALL_HINT = "pip install 'athena-harness[ray]'"
#: Batches queued per actor: one running, one waiting, so an actor never idles on the driver.
_QUEUED_PER_ACTOR = 2


def import_ray() -> Any:
    """The ``ray`` module, or ConfigError saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ConfigError(
            f"--executor ray: Ray is not installed in this environment; install it with "
            f"{INSTALL_HINT} (or use --executor local)"
        ) from None
    return ray


@dataclass(frozen=True, slots=True)
class RayOptions:
    #: A running cluster (``ray start --head`` prints it, e.g. ``10.0.0.5:6379``); None: a
    #: local cluster started for the run and stopped after it (unless Ray is already
    #: initialised in this process, which is then used as it is).
    address: str | None = None
    #: Actors; None: one per CPU of the cluster.
    workers: int | None = None
    #: Cells per batch; None: ``8 x concurrency``, fewer for small runs (two batches per actor).
    batch_size: int | None = None
    #: Restarts of an actor whose process died, and retries of a batch it was running.
    max_restarts: int = 3
    max_task_retries: int = 3
    #: An actor running batches that sends nothing back for this long is asked where they
    #: are: a batch it never started, or finished without its result coming back, this long
    #: after it was sent, or every batch of an actor that does not answer within this long,
    #: is given up (crashed cells).
    liveness_s: float = 30.0


@dataclass(slots=True)
class _Running:
    actor: int
    specs: list[CellSpec]
    sent: float = 0.0  # time.monotonic() when it was submitted


class RayRunner:
    """An :class:`~harness.bench._runner.Executor` that runs cells on Ray actors."""

    def __init__(
        self,
        options: RunnerOptions,
        sink: Sink,
        *,
        suites: Sequence[Suite],
        ray_options: RayOptions | None = None,
        trace_file: Path | None = None,
        otlp_endpoint: str | None = None,
        secrets: tuple[str, ...] = (),
    ) -> None:
        self.options = options
        self.secrets = secrets
        self._redact = Redactor(secrets, cut_heads=True)  # spans hold cut texts
        #: A full disk is waited out as the store's writes do (then DiskFull: exit 3).
        self._disk = DiskPatience()
        self.sink = sink
        self.suites = list(suites)
        self.ray_options = ray_options or RayOptions()
        self.trace_file = trace_file
        self.otlp_endpoint = otlp_endpoint
        self._stop = asyncio.Event()
        self._interrupted = False  # a batch's runner stopped
        #: The actors' process ids once they are up (tests kill one to check the retries).
        self.worker_pids: list[int] = []
        #: ``time.perf_counter()`` when every actor was up (benchmarks measure from there).
        self.ready_at: float | None = None
        #: How many batches were run by each (node, pid): a restarted actor shows a new pid.
        self.batches_by_worker: collections.Counter[tuple[str, int]] = collections.Counter()

    def request_stop(self) -> None:
        """Submit no new batch; the actors are killed and the run returns as interrupted."""
        self._stop.set()

    async def run(
        self, cells: Sequence[Cell], on_outcome: OnOutcome | None = None
    ) -> MatrixSummary:
        summary = MatrixSummary(total=len(cells))
        started = time.perf_counter()
        if not cells:
            return summary
        ray = import_ray()
        try:
            own_cluster = connect(ray, self.ray_options.address)
        except _StoppedWhileStarting:
            summary.interrupted = True
            summary.skipped = summary.total
            summary.elapsed_s = time.perf_counter() - started
            return summary
        reaper = start_reaper() if own_cluster else None  # stops the cluster if we are killed
        actors: list[Any] = []
        try:
            actors = self._start_actors(ray, len(cells))
            pids = await asyncio.gather(*(_future(a.pid.remote()) for a in actors))
            self.worker_pids = list(pids)
            self.ready_at = time.perf_counter()
            await self._drive(ray, actors, cells, summary, on_outcome)
        finally:
            for spans in await _close(actors):
                self._append_spans(spans, "a closing worker")
            for actor in actors:
                ray.kill(actor, no_restart=True)
            if own_cluster:
                ray.shutdown()
            if reaper is not None:
                reaper.terminate()
                reaper.wait()
            summary.elapsed_s = time.perf_counter() - started
            summary.skipped = summary.total - summary.done
        return summary

    def _start_actors(self, ray: Any, n_cells: int) -> list[Any]:
        opts, ropts = self.options, self.ray_options
        cpus = max(1.0, float(ray.cluster_resources().get("CPU", 1.0)))
        workers = ropts.workers or int(cpus)
        workers = max(1, min(workers, n_cells))
        remote = ray.remote(
            num_cpus=min(1.0, cpus / workers),
            # An async actor: its queued batches overlap, and pid/close never wait for them.
            max_concurrency=_QUEUED_PER_ACTOR + 1,
            max_restarts=ropts.max_restarts,
            max_task_retries=ropts.max_task_retries,
        )(CellWorker)
        worker_options = WorkerOptions(
            cassettes=opts.cassettes.resolve(),
            record_mode=opts.record_mode,
            concurrency=opts.concurrency,
            provider_concurrency=opts.provider_concurrency,
            ignore_hosts=opts.ignore_hosts,
            run_id=opts.run_id,
            otlp_endpoint=self.otlp_endpoint,
            drift=opts.drift,
            secrets=self.secrets,
        )
        # Inline, not ray.put: a restarted actor needs its arguments again (ray#53727).
        return [remote.remote(self.suites, worker_options) for _ in range(workers)]

    def _batches(self, cells: Sequence[Cell], workers: int) -> collections.deque[list[CellSpec]]:
        root = self.options.cassettes.resolve()
        specs = [spec_of(c, root) for c in cells]
        size = self.ray_options.batch_size
        if size is None:
            fair = math.ceil(len(specs) / (workers * _QUEUED_PER_ACTOR))
            size = max(1, min(8 * self.options.concurrency, fair))
        return collections.deque(specs[i : i + size] for i in range(0, len(specs), size))

    async def _drive(
        self,
        ray: Any,
        actors: list[Any],
        cells: Sequence[Cell],
        summary: MatrixSummary,
        on_outcome: OnOutcome | None,
    ) -> None:
        by_key = {c.key: c for c in cells}
        seen: set[str] = set()
        pending = self._batches(cells, len(actors))
        running: dict[asyncio.Future[Any], _Running] = {}
        load = [0] * len(actors)

        def submit() -> None:
            while pending and not self._stop.is_set():
                actor = min(range(len(actors)), key=load.__getitem__)
                if load[actor] >= _QUEUED_PER_ACTOR:
                    return
                specs = pending.popleft()
                ref = actors[actor].run_batch.remote(specs)
                running[_future(ref)] = _Running(actor, specs, time.monotonic())
                load[actor] += 1

        def deliver(outcome: CellOutcome) -> None:
            if outcome.cell.key in seen:  # a retried batch's second copy: stored once only
                return
            seen.add(outcome.cell.key)
            self.sink(outcome)
            summary.count(outcome)
            if on_outcome is not None:
                on_outcome(outcome, summary)

        stopper = asyncio.ensure_future(self._stop.wait())
        heard = [time.monotonic()] * len(actors)
        try:
            submit()
            while running and not self._stop.is_set():
                done, _ = await asyncio.wait(
                    [*running, stopper],
                    timeout=self.ray_options.liveness_s,
                    return_when=asyncio.FIRST_COMPLETED,
                )
                for fut in done:
                    if fut is stopper:
                        continue
                    job = running.pop(fut)
                    load[job.actor] -= 1
                    heard[job.actor] = time.monotonic()
                    for outcome in self._outcomes(fut, job, by_key):
                        deliver(outcome)
                        await asyncio.sleep(0)  # let Ctrl-C and the progress bar in
                for outcome in await self._give_up_silent(
                    ray, actors, running, load, heard, by_key
                ):
                    deliver(outcome)
                if all(n > _QUEUED_PER_ACTOR for n in load):  # no actor left: no one runs them
                    while pending:
                        why = "Ray worker failed: no actor left to run it"
                        for outcome in _crashed(_Running(-1, pending.popleft()), by_key, why):
                            deliver(outcome)
                submit()
            summary.interrupted = bool(pending or running) or self._interrupted
        finally:
            stopper.cancel()
            for fut in running:
                fut.cancel()

    async def _give_up_silent(
        self,
        ray: Any,
        actors: list[Any],
        running: dict[asyncio.Future[Any], _Running],
        load: list[int],
        heard: list[float],
        by_key: dict[str, Cell],
    ) -> list[CellOutcome]:
        """The crashed cells of the batches given up: an actor running batches that sent
        nothing back for ``liveness_s`` is asked where they are (:meth:`CellWorker.batches`);
        one not started, or finished without its result reaching the driver, ``liveness_s``
        after it was sent is given up, and so is every batch of an actor that does not answer
        within ``liveness_s`` (it is killed and gets no more). A tool that cancelled every task
        of its actor's loop (Ray's own too) left a batch that never ran: the run waited for
        ever (adversary round 19, part A)."""
        wait_s, now = self.ray_options.liveness_s, time.monotonic()
        silent = [a for a, n in enumerate(load) if 0 < n <= _QUEUED_PER_ACTOR]
        silent = [a for a in silent if now - heard[a] >= wait_s]
        jobs = {a: [(f, j) for f, j in running.items() if j.actor == a] for a in silent}
        asked = [actors[a].batches.remote([j.specs[0].key for _, j in jobs[a]]) for a in silent]
        answers = await asyncio.gather(
            *(asyncio.wait_for(_future(ref), wait_s) for ref in asked), return_exceptions=True
        )
        given_up: list[CellOutcome] = []
        for actor, answer in zip(silent, answers, strict=True):
            heard[actor] = time.monotonic()
            if isinstance(answer, BaseException):  # no answer: all its batches are given up
                load[actor] = _QUEUED_PER_ACTOR + 1  # and it gets no more
                with contextlib.suppress(Exception):
                    ray.kill(actors[actor], no_restart=True)
            for fut, job in jobs[actor]:
                why = _why_given_up(answer, job, now, wait_s)
                if why is None:
                    continue
                if not isinstance(answer, BaseException):
                    load[actor] -= 1
                del running[fut]
                fut.cancel()
                given_up += _crashed(job, by_key, f"Ray worker failed: {why}; batch given up")
        return given_up

    def _outcomes(
        self, fut: asyncio.Future[Any], job: _Running, by_key: dict[str, Cell]
    ) -> list[CellOutcome]:
        """The batch's outcomes; its spans appended to the span file on the way. A batch that
        failed after Ray's retries comes back as crashed cells (status ``error``)."""
        try:
            batch: Batch = fut.result()
        except Exception as exc:
            reason = f"Ray worker failed after {self.ray_options.max_task_retries} retries: "
            return _crashed(job, by_key, reason + f"{type(exc).__name__}: {first_line(exc)}")
        self.batches_by_worker[(batch.node, batch.pid)] += 1
        if batch.interrupted:  # a cell's KeyboardInterrupt: the run stops as Ctrl-C stops it
            self._interrupted = True  # (its unfinished cells were lost: round 20, part A)
            self.request_stop()
        self._append_spans(batch.spans, f"{len(batch.outcomes)} cell(s)")
        return [r.outcome(by_key[r.key]) for r in batch.outcomes]

    def _append_spans(self, spans: str, whose: str) -> None:
        path = self.trace_file
        if spans and path is not None:
            data = self._redact.text(spans)  # scrubbed by the worker too
            try:  # whole lines or none, a full disk waited out as the store's writes do
                self._disk.call(lambda: append_whole_lines(path, data), f"appending to {path}")
            except DiskFull as exc:  # the spans are lost, never the results (the store's own)
                log.warning("spans of %s not written: %s", whose, exc)


def _crashed(job: _Running, by_key: dict[str, Cell], reason: str) -> list[CellOutcome]:
    """A batch's cells as crashed cells (status ``error``) for ``reason``."""
    return [
        CellOutcome(by_key[s.key], Path(s.cassette) if s.cassette else None, error=reason)
        for s in job.specs
    ]


async def _close(actors: list[Any]) -> list[str]:
    """Let the actors remove their scratch folders (bounded: a stuck actor is killed anyway);
    the span lines each still had (roots held for a verdict that never came)."""
    if not actors:
        return []
    closing = [_future(a.close.remote()) for a in actors]
    with contextlib.suppress(Exception):
        done = await asyncio.wait_for(asyncio.gather(*closing, return_exceptions=True), 10)
        return [spans for spans in done if isinstance(spans, str)]
    return []


def _future(ref: Any) -> asyncio.Future[Any]:
    """An asyncio future for a Ray ObjectRef."""
    return asyncio.wrap_future(ref.future())


def ray_executor(options: RunnerOptions, sink: Sink, context: ExecutorContext) -> RayRunner:
    """The ``ray`` entry of the executor registry: cells on Ray actors."""
    if context.workers is not None and context.workers < 1:
        raise ConfigError(f"--workers: must be >= 1, got {context.workers}")
    import_ray()  # not installed: ConfigError with the install command
    return RayRunner(
        options,
        sink,
        suites=context.suites,
        ray_options=RayOptions(address=context.address, workers=context.workers),
        trace_file=context.trace_file,
        otlp_endpoint=context.otlp_endpoint,
        secrets=context.secrets,
    )


def _why_given_up(answer: Any, job: _Running, now: float, wait_s: float) -> str | None:
    """Why a silent actor's batch is given up, from the actor's answer to
    :meth:`CellWorker.batches` (or what asking it raised); ``None`` while it runs, or was sent
    less than ``wait_s`` ago."""
    if isinstance(answer, BaseException):
        return f"its actor did not answer within {wait_s:g} s ({type(answer).__name__})"
    state, ago = answer.get(job.specs[0].key, ("", now - job.sent))
    if state == "started" or ago < wait_s:
        return None
    if state:
        return f"its actor finished it {ago:.0f} s ago; its result never came"
    return f"its actor had not started it {ago:.0f} s after it was sent"
