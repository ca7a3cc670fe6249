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
again (``max_task_retries``). No cell of the lost attempt reached the driver, and the driver keeps
the first copy of each cell key anyway, so no cell is lost or stored twice (spans of the lost
attempt that came back with an overlapping batch stay in the span file; their traces match no
row). A batch whose retries are exhausted comes back as crashed cells (status ``error``, exit 3,
``--retry-errors`` runs them again). :meth:`RayRunner.request_stop` (Ctrl-C) submits nothing
more and kills the actors: finished batches are kept, the rest is left to ``--resume``.

This module imports Ray only when a run starts (:func:`import_ray`), so ``import harness`` and
the local executor never load it.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import math
import signal
import socket
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.bench._matrix import Cell
from harness.bench._outcome import CellOutcome, MatrixSummary, OnOutcome, Sink
from harness.bench._ray_reaper import start_reaper
from harness.bench._ray_worker import Batch, CellSpec, CellWorker, WorkerOptions, spec_of
from harness.bench._runner import RunnerOptions
from harness.cassettes._secrets import Redactor
from harness.errors import ConfigError, DiskFull, HarnessError
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


@dataclass(slots=True)
class _Running:
    actor: int
    specs: list[CellSpec]


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
            own_cluster = _connect(ray, self.ray_options.address)
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
                running[_future(ref)] = _Running(actor, specs)
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
        try:
            submit()
            while running and not self._stop.is_set():
                done, _ = await asyncio.wait(
                    [*running, stopper], return_when=asyncio.FIRST_COMPLETED
                )
                for fut in done:
                    if fut is stopper:
                        continue
                    job = running.pop(fut)
                    load[job.actor] -= 1
                    for outcome in self._outcomes(fut, job, by_key):
                        deliver(outcome)
                        await asyncio.sleep(0)  # let Ctrl-C and the progress bar in
                submit()
            summary.interrupted = bool(pending or running)
        finally:
            stopper.cancel()
            for fut in running:
                fut.cancel()

    def _outcomes(
        self, fut: asyncio.Future[Any], job: _Running, by_key: dict[str, Cell]
    ) -> list[CellOutcome]:
        """The batch's outcomes; its spans appended to the span file on the way. A batch that
        failed after Ray's retries comes back as crashed cells (status ``error``)."""
        try:
            batch: Batch = fut.result()
        except Exception as exc:
            reason = f"Ray worker failed after {self.ray_options.max_task_retries} retries: "
            reason += f"{type(exc).__name__}: {_first_line(exc)}"
            return [
                CellOutcome(by_key[s.key], Path(s.cassette) if s.cassette else None, error=reason)
                for s in job.specs
            ]
        self.batches_by_worker[(batch.node, batch.pid)] += 1
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


class _StoppedWhileStarting(Exception):
    """A SIGTERM arrived while Ray started: the run stops as interrupted."""


def _connect(ray: Any, address: str | None) -> bool:
    """Connect to ``address``, or start a local cluster; True when this call started Ray (so
    the run stops it). An unreachable address is bad input (ConfigError naming it).

    ``ray.init`` replaces the process's SIGTERM handler with ``sys.exit``: a SIGTERM (``kill``,
    ``timeout``, ``docker stop``) then ended a Ray run as an executor crash (``the executor
    'ray' raised SystemExit: 15``, its cells errored, exit 3), not as Ctrl-C does (interrupted,
    exit 130, ``--resume``). The handler found is put back once Ray is up; a SIGTERM during
    the start itself (Ray's handler still in place) stops the run as interrupted."""
    if ray.is_initialized():
        return False
    main = threading.current_thread() is threading.main_thread()
    sigterm = signal.getsignal(signal.SIGTERM) if main else None
    try:
        _init(ray, address)
    except SystemExit as exc:
        if exc.code != signal.SIGTERM or not main:
            raise
        with contextlib.suppress(Exception):
            ray.shutdown()
        raise _StoppedWhileStarting from None
    finally:
        if main and sigterm is not None:
            with contextlib.suppress(ValueError, OSError):
                signal.signal(signal.SIGTERM, sigterm)
    return True


def _init(ray: Any, address: str | None) -> None:
    kwargs: dict[str, Any] = {
        "include_dashboard": False,
        "log_to_driver": False,
        "configure_logging": True,
        "logging_level": "warning",
    }
    try:
        if address is None:
            ray.init(address="local", **kwargs)
        else:
            _probe(address)
            ray.init(address=address, **kwargs)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = f"--ray-address {address}" if address else "--executor ray (local cluster)"
        raise ConfigError(
            f"{where}: cannot start or reach Ray: {_first_line(exc)}; start a cluster with "
            "`ray start --head` and pass the address it prints"
        ) from None
    except Exception as exc:  # Ray raises a bare Exception when its node does not start in time
        where = f"--ray-address {address}" if address else "--executor ray (local cluster)"
        raise HarnessError(
            f"{where}: Ray did not start: {_first_line(exc)} (a loaded machine can make its node "
            "miss Ray's start-up limit); run again, or start a cluster with `ray start --head` "
            "and pass the address it prints with --ray-address"
        ) from None


def _probe(address: str) -> None:
    """Fail fast (Ray retries for a minute) when nothing listens at a ``host:port`` address."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        return  # "auto" and other forms: Ray's own message
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
    except OSError as exc:
        raise ConfigError(
            f"--ray-address {address}: cannot start or reach Ray: nothing answers there "
            f"({exc.strerror or exc}); start a cluster with `ray start --head` and pass the "
            "address it prints"
        ) from None


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


def _first_line(exc: BaseException) -> str:
    """The first line of ``exc``, and of its cause (Ray's ConnectionError hides the reason, an
    authentication error for instance, in ``__cause__``)."""

    def line(e: BaseException) -> str:
        text = str(e).strip()
        return text.splitlines()[0] if text else type(e).__name__

    cause = exc.__cause__
    return f"{line(exc)} ({line(cause)})" if cause is not None else line(exc)


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
