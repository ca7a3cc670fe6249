"""``harness run``: load suites, expand the matrix, run it, store every cell as it finishes
(Parquet shards beside the DuckDB catalog, on disk within a second), stream the run's spans into
shards too, close the run (finished or interrupted) and compact its shards into the tables.

This is the orchestration behind the CLI; the CLI itself only parses arguments, and passes
``drive=`` (:func:`harness.cli._progress.drive`: the progress bar and the Ctrl-C handling) so this
module stays free of terminal concerns: warnings and notes go to the ``harness.bench`` logger
(the CLI shows them on the terminal), progress to the ``drive``'s per-cell callback.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from harness._plugins import described
from harness.bench._discover import discover_providers, recorded
from harness.bench._guard import Guarded
from harness.bench._live import preflight
from harness.bench._matrix import Cell, expand
from harness.bench._outcome import CellOutcome, DriftPolicy, Executor, MatrixSummary, Sink
from harness.bench._preflight import (
    check_executor,
    check_graders,
    check_judges,
    check_names,
    check_output_path,
    check_providers,
    check_recorded_epochs,
    check_utf8,
    dedupe,
    suite_files_or_none,
    utf8_or_refuse,
)
from harness.bench._redact import run_redactor
from harness.bench._rundir import RunFolder, remove_stale
from harness.bench._runner import RunnerOptions
from harness.bench._scrub import scrub_summary, scrubbed
from harness.bench._stored import StoredCells, crashed_executor
from harness.errors import ConfigError, DiskFull, HarnessError
from harness.grading._python import DEFAULT_TIMEOUT_S
from harness.suites._load import load_suites
from harness.suites._suite import Suite

if TYPE_CHECKING:
    from harness.cassettes._secrets import Redactor
    from harness.store._writer import Store
    from harness.telemetry._setup import TracingHandle

__all__ = ["BenchReport", "BenchRequest", "Drive", "discover_providers", "drive_plain", "run_bench"]

log = logging.getLogger("harness.bench")

EXIT_INTERRUPTED = 130
#: Some cells errored (could not be scored): they are listed, stored with their cause and left
#: out of pass rates.
EXIT_ERRORED = 3

#: How a run drives its matrix: ``(executor, cells, progress) -> summary``. It runs
#: ``runner.run(cells, ...)`` to the end (or until something calls ``runner.request_stop()``);
#: ``progress`` is :attr:`BenchRequest.progress`. The CLI passes one with a progress bar and
#: Ctrl-C handling (:func:`harness.cli._progress.drive`); the default draws nothing.
Drive = Callable[[Executor, Sequence[Cell], bool], MatrixSummary]


@dataclass(slots=True)
class BenchRequest:
    suites: Sequence[str]
    modes: Sequence[str] = ("react",)
    #: Provider specs; ``("auto",)``: each suite on the mock plus every provider with
    #: cassettes for that suite.
    providers: Sequence[str] = ("mock",)
    epochs: int = 1
    tasks: Sequence[str] = ()
    concurrency: int = 4
    provider_concurrency: int | None = None
    record_mode: str = "none"
    cassettes: Path = Path("cassettes")
    db: Path = Path("reports/harness.duckdb")
    label: str | None = None
    trace_file: Path | None = None
    otlp_endpoint: str | None = None
    #: Message contents in the spans (prompts, replies, tool arguments and results, truncated):
    #: ``None`` follows ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``, else on for the
    #: local span file alone and off when spans also go to --otlp-endpoint.
    capture_content: bool | None = None
    resume: bool = False
    #: Re-run only the cells of ``label``'s latest runs whose status is ``error``.
    retry_errors: bool = False
    #: Passed to the ``drive`` of :func:`run_bench` (the CLI's draws a progress bar).
    progress: bool = True
    #: ``local`` (this process) or ``ray`` (actors on a Ray cluster, see
    #: :mod:`harness.bench._ray_executor`); ``workers`` and ``ray_address`` are for ``ray``.
    executor: str = "local"
    workers: int | None = None
    ray_address: str | None = None
    #: A replayed request unlike its recording: ``warn`` (counted in ``results.drift`` and the
    #: summary) or ``error`` (the cell is an error cell).
    drift: DriftPolicy = "warn"
    #: Probe each live provider once before the first cell (:mod:`harness.bench._live`); a
    #: provider that fails is not run (:attr:`BenchReport.refused`).
    preflight: bool = True


@dataclass(slots=True)
class BenchReport:
    run_id: str
    summary: MatrixSummary
    spans: int = 0
    trace_file: Path | None = None
    per_cell: dict[str, bool] = field(default_factory=dict)
    #: Live providers that failed the pre-flight, with the reason: their cells were not run.
    refused: dict[str, str] = field(default_factory=dict)
    #: How many cells those were (not stored: ``--resume`` runs them).
    refused_cells: int = 0
    #: Why the executor stopped before its end (it raised): the run is ``failed``, exit 3.
    crashed: str | None = None

    @property
    def exit_code(self) -> int:
        """130 when interrupted, 3 when some cells could not be scored (status ``error``) or
        were not run (their provider failed the pre-flight), else 0 (a task failing is data,
        not an error)."""
        if self.summary.interrupted:
            return EXIT_INTERRUPTED
        return EXIT_ERRORED if self.summary.errored or self.refused or self.crashed else 0


def run_bench(request: BenchRequest, *, drive: Drive | None = None) -> BenchReport:
    """Run a bench request to completion (or until ``drive`` stops the runner, e.g. on Ctrl-C).
    Raises ConfigError for bad input, LabelBusy (another process runs ``label``) and DiskFull
    (the run closed ``failed``, resumable). ``drive`` defaults to :func:`drive_plain`."""
    from harness.store._rows import prepare_row
    from harness.store._writer import Store
    from harness.telemetry._setup import git_sha

    suites, modes, providers, cells = _prepare(request)
    remove_stale()  # run folders left by killed runs
    with Store.open(request.db) as store:
        if request.retry_errors and request.label is not None:
            errored = store.existing_cells(request.label, status="error")
            cells = [c for c in cells if c.key in errored]
            if not cells:  # nothing to do: no run row either
                log.info("nothing to retry: no errored cell under label %r", request.label)
                return BenchReport("-", MatrixSummary(total=0))
        run_id = store.begin_run(
            label=request.label,
            suites=[s.suite for s in suites],
            modes=modes,
            providers=providers,
            epochs=request.epochs,
            config=_config(request, suites),
            git_sha=git_sha(Path.cwd()),  # the checkout being benchmarked
            resume=request.resume or request.retry_errors,
        )
        if request.resume and request.label is not None:
            done = store.existing_cells(request.label, include_crashed=False)
            cells = [c for c in cells if c.key not in done]
        wanted = len(cells)
        cells, refused = _preflighted(request, cells)
        trace_file = request.trace_file or request.db.parent / "traces" / f"{run_id}.jsonl"
        # One redactor for every sink: rows, spans, the trace file, OTLP, log records.
        redact = run_redactor(providers)
        tracing = _start_tracing(request, store, run_id, trace_file, redact)
        report = BenchReport(run_id, MatrixSummary(total=len(cells)), trace_file=trace_file)
        if refused:
            report.refused, report.refused_cells = refused, wanted - len(cells)
        # Spans reach the store as the run goes (scrubbed piece by piece), never all at once.
        store.follow_spans(run_id, trace_file, scrub=redact if redact else None)
        ignore = _collector_hosts(request.otlp_endpoint)
        disk_full: list[DiskFull] = []  # the disk stayed full: the run stops, resumable
        stored = StoredCells(cells)

        @stored.taking  # one at a time, none once the summary is counted
        def sink(outcome: CellOutcome) -> None:
            if not stored.admit(outcome):  # a cell twice, one this run never had, not an outcome
                return
            try:  # checked before the store sees it: a bad value is the outcome's fault
                prepared = prepare_row(scrubbed(_row(outcome, run_id), redact))
            except Exception as exc:  # an executor plug-in's outcome that makes no row
                stored.forget(outcome)
                log.warning("harness: the outcome of %s makes no row (%s); not stored",
                            outcome.cell.key, described(exc))  # fmt: skip
                return
            try:
                store.write_prepared(prepared)
            except DiskFull as exc:  # not stored: the run stops; a --resume runs the cell again
                stored.forget(outcome)
                disk_full.append(exc)
                runner.request_stop()
                return
            stored.stored(outcome, prepared)
            report.per_cell[outcome.cell.key] = prepared["status"] == "passed"

        options = RunnerOptions(
            cassettes=request.cassettes,
            record_mode=request.record_mode,
            concurrency=request.concurrency,
            provider_concurrency=request.provider_concurrency,
            tracer_provider=tracing.tracer_provider,
            ignore_hosts=ignore,
            run_id=run_id,
            drift=request.drift,
        )
        status = "failed"
        folder = store.disk.call(lambda: RunFolder(run_id), "creating the run folder")
        options.work_root = folder.path
        runner = _executor(request, options, sink, suites, trace_file, redact.secrets)
        crashed: str | None = None
        try:
            status, crashed = _drive(request, runner, cells, stored, redact, drive, report)
        finally:
            folder.remove()
            tracing.shutdown()
            try:
                report.spans = store.ingest_spans(run_id, trace_file)  # the rest of the file
                redact.file(trace_file)  # e.g. spans a Ray driver appended
            except Exception as exc:  # spans are a bonus; never lose the results for them
                log.warning("spans not ingested: %s", exc)
            error = f"the disk was full: {disk_full[0]}" if disk_full else crashed
            store.finish_run(run_id, "failed" if error else status, error=error)  # type: ignore[arg-type]
            store.compact_or_warn()
        if disk_full:
            raise disk_full[0]
    return report


def _preflighted(request: BenchRequest, cells: list[Cell]) -> tuple[list[Cell], dict[str, str]]:
    """The cells whose live provider passed its pre-flight, and why the others were refused
    (by provider). Replays are never probed. $HARNESS_LIVE_PREFLIGHT=0 is the test suite's seam
    (its loopback doubles cannot answer the probe), not a user option."""
    if not request.preflight or os.environ.get("HARNESS_LIVE_PREFLIGHT") == "0":
        return cells, {}
    cells, refused = preflight(cells, request.cassettes, request.record_mode)
    for spec, why in refused.items():
        log.warning("%s: pre-flight failed, its cells are not run: %s", spec, why)
    return cells, refused


def _drive(
    request: BenchRequest,
    runner: Executor,
    cells: list[Cell],
    stored: StoredCells,
    redact: Redactor,
    drive: Drive | None,
    report: BenchReport,
) -> tuple[str, str | None]:
    """Run the cells through ``drive`` and count ``report.summary`` from what the run stored:
    the run's status, and what the executor raised if it crashed (its stored cells are kept)."""
    crashed: str | None = None
    started = time.perf_counter()
    told: object
    try:
        with redact.scrubbing_logs():
            # The executor gets a list of its own, and is guarded (see harness.bench._guard).
            guarded = Guarded(runner, stored, request.executor)
            told = (drive or drive_plain)(guarded, list(cells), request.progress)
    except HarnessError:
        raise
    except (Exception, SystemExit, asyncio.CancelledError) as exc:  # an executor plug-in
        # raising mid-run (its SystemExit: exit 0, its cells lost; else a traceback), or a tool
        # cancelling every task (round 18, part A); other BaseExceptions go on up.
        crashed = redact.text(crashed_executor(request.executor, exc))
        log.error("harness: %s; the cells it stored are kept", crashed)
        told = MatrixSummary(total=len(cells))
    # What the run stored, not what the executor says (a plug-in's summary may not hold)
    report.summary = stored.summary(told, request.executor, time.perf_counter() - started)
    if crashed is not None:
        report.summary.errors.insert(0, crashed)
        report.crashed = crashed
    scrub_summary(report.summary, redact)
    return ("interrupted" if report.summary.interrupted else "finished"), crashed


def _start_tracing(
    request: BenchRequest, store: Store, run_id: str, trace_file: Path, redact: Redactor
) -> TracingHandle:
    """The run's tracing into ``trace_file`` (a full disk waited for with ``store.disk``, then
    DiskFull). When it cannot start, the run never started: its new row is removed, and a file
    that cannot be written is a ConfigError naming ``--trace-file``."""
    from harness.telemetry._setup import configure_tracing

    def start() -> TracingHandle:
        trace_file.parent.mkdir(parents=True, exist_ok=True)
        return configure_tracing(
            file=trace_file,
            otlp_endpoint=request.otlp_endpoint,
            capture_content=request.capture_content,
            hold_roots=True,  # each cell's root span waits for its verdict (the runner)
            scrub=redact if redact else None,
        )

    try:
        tracing: TracingHandle = store.disk.call(start, f"opening {trace_file}")
    except Exception as exc:  # the run never started: leave no run row behind
        if not (request.resume or request.retry_errors):
            store.discard_run(run_id)
        if isinstance(exc, OSError):  # a full disk is DiskFull here, never "bad input"
            raise ConfigError(f"--trace-file {trace_file}: {exc}") from exc
        raise
    return tracing


def _executor(
    request: BenchRequest,
    options: RunnerOptions,
    sink: Sink,
    suites: Sequence[Suite],
    trace_file: Path,
    secrets: tuple[str, ...] = (),
) -> Executor:
    """The executor the request names (same sink: rows take the same store path)."""
    from harness.bench._executors import ExecutorContext, make_executor

    context = ExecutorContext(
        suites=suites,
        trace_file=trace_file,
        otlp_endpoint=request.otlp_endpoint,
        workers=request.workers,
        address=request.ray_address,
        secrets=secrets,
    )
    return make_executor(request.executor, options, sink, context)


def _row(outcome: CellOutcome, run_id: str) -> dict[str, Any]:
    """The ``results`` row of one cell: scored (passed, failed or errored), or crashed."""
    from harness.grading._answer import turn_marks
    from harness.store._rows import crashed_row, result_row

    cell = outcome.cell
    common: dict[str, Any] = {
        "run_id": run_id,
        "suite": cell.suite.suite,
        "task_id": cell.task.id,
        "mode": cell.mode,
        "provider": cell.provider,
        "epoch": cell.epoch,
        "cell_key": cell.key,
    }
    cassette = str(outcome.cassette) if outcome.cassette is not None else None
    if outcome.result is not None and outcome.grade is not None:
        status = outcome.status
        return result_row(
            outcome.result,
            passed=status == "passed",
            status=status,
            error=outcome.error_cause,
            score=outcome.grade.score,
            grader_explanation=outcome.grade.explanation,
            grading_cost_usd=outcome.grade.cost_usd,
            cassette=cassette,
            turns=turn_marks(outcome.result),
            reviews=[r.as_entry() for r in outcome.reviews],
            drift=outcome.drift,
            **common,
        )
    return crashed_row(error=outcome.error or "unknown error", cassette=cassette, **common)


def _prepare(request: BenchRequest) -> tuple[list[Suite], list[str], list[str], list[Cell]]:
    """Everything checked before a run row exists (bad input exits 2 and leaves no trace):
    suites, names (repeats dropped with a warning), output paths, providers, graders and, when
    replaying, that the epochs asked for were recorded."""

    def warn(message: str) -> None:
        log.warning("%s", message)

    check_utf8(request)
    named = [f.resolve() for p in request.suites for f in suite_files_or_none(p)]
    if len(set(named)) < len(named):
        again = sorted({str(f) for f in named if named.count(f) > 1})
        warn(f"suite file(s) named more than once, each runs once: {', '.join(again)}")
    suites = load_suites(request.suites)
    for suite in suites:
        utf8_or_refuse(str(suite.source), "SUITE (a file found there)")
    providers = list(request.providers)
    auto = providers == ["auto"]
    if auto:
        providers = discover_providers(request.cassettes, [s.suite for s in suites])
    from harness.modes._base import mode_label

    modes = dedupe([mode_label(m) for m in request.modes], "--modes", warn)
    providers = dedupe(providers, "--providers", warn)
    check_names(modes, providers)
    cells = expand(suites, modes, providers, request.epochs, tasks=request.tasks)
    modes = list(dict.fromkeys([*modes, *(c.mode for c in cells)]))  # with suites' extra_modes
    if auto:  # a discovered provider runs only the cells it has cassettes for
        cells = [c for c in cells if c.is_mock or recorded(c, request.cassettes)]
    check_output_path(request.db, "--db")
    if request.trace_file is not None:
        check_output_path(request.trace_file, "--trace-file")
    else:
        probe = request.db.parent / "traces" / f".probe-{os.getpid()}.jsonl"
        check_output_path(probe, "--trace-file (default: traces/ beside --db)")
    check_providers(providers, request.record_mode)
    check_judges(suites, request.record_mode)
    check_graders(suites)
    check_recorded_epochs(cells, request.cassettes, request.record_mode)
    check_executor(request.executor, request.workers, request.ray_address)
    return suites, modes, providers, cells


def _config(request: BenchRequest, suites: Sequence[Suite]) -> dict[str, Any]:
    """What ``bench_runs.config`` records: the options that change what the cells do."""
    return {
        "tasks": list(request.tasks),
        "record_mode": request.record_mode,
        "concurrency": request.concurrency,
        "provider_concurrency": request.provider_concurrency,
        "cassettes": str(request.cassettes),
        "suite_files": [str(s.source) for s in suites],
        "seed": "the cell's epoch (seed=epoch on every provider request)",
        "trace_file": str(request.trace_file) if request.trace_file else None,
        "otlp": request.otlp_endpoint is not None,
        "capture_content": request.capture_content,
        "resume": request.resume,
        "retry_errors": request.retry_errors,
        "python_grader_timeout_s": DEFAULT_TIMEOUT_S,
        "executor": request.executor,
        "workers": request.workers,
        "ray_address": request.ray_address,
        "drift": request.drift,
    }


def _collector_hosts(endpoint: str | None) -> tuple[str, ...]:
    """The collector's exact ``host:port``, never the host alone: a local model server on the
    same host (127.0.0.1) must stay recorded and replayed."""
    if not endpoint:
        return ()
    parts = urlsplit(endpoint if "://" in endpoint else f"http://{endpoint}")
    if not parts.hostname:
        return ()
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return (f"{parts.hostname.lower()}:{port}",)


def drive_plain(runner: Executor, cells: Sequence[Cell], progress: bool) -> MatrixSummary:
    """The default :data:`Drive`: run every cell on a fresh event loop, with no progress bar and
    no signal handlers (a library caller decides what Ctrl-C does)."""
    return asyncio.run(runner.run(cells))
