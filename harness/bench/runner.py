"""Run matrix cells concurrently, grade them, and hand each finished row to a sink.

Each cell gets a fresh workspace (a temporary directory, removed afterwards) and, for HTTP
providers, its own cassette transport, so concurrent cells never share recordings. A cell that
crashes becomes a failed row carrying the error; the matrix goes on. Rows reach the sink as each
cell finishes, so an interrupted run keeps everything it finished. Stopping (``request_stop()``,
which the CLI calls on Ctrl-C) schedules nothing new and cancels the cells in flight; they are not
recorded, so ``--resume`` runs them again.
"""

from __future__ import annotations

import asyncio
import json
import shlex
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from harness.api import arun
from harness.bench.cassettes import CassetteTransport, profile_secrets
from harness.bench.graders import Grade, grade
from harness.bench.matrix import Cell
from harness.kernel.result import Result

__all__ = ["MatrixSummary", "ResultSink", "Runner", "RunnerOptions", "result_row"]


class ResultSink(Protocol):
    def write_result(self, row: dict[str, Any]) -> None: ...


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


@dataclass(slots=True)
class MatrixSummary:
    total: int
    done: int = 0
    passed: int = 0
    failed: int = 0
    crashed: int = 0
    skipped: int = 0
    cost_usd: float = 0.0
    interrupted: bool = False
    elapsed_s: float = 0.0
    errors: list[str] = field(default_factory=list)

    @property
    def cells_per_s(self) -> float:
        return self.done / self.elapsed_s if self.elapsed_s > 0 else 0.0


OnRow = Callable[[dict[str, Any], MatrixSummary], None]


class Runner:
    def __init__(self, options: RunnerOptions, sink: ResultSink) -> None:
        self.options = options
        self.sink = sink
        self._stop = asyncio.Event()

    def request_stop(self) -> None:
        """Schedule no new cell and cancel the cells in flight."""
        self._stop.set()

    async def run(self, cells: Sequence[Cell], on_row: OnRow | None = None) -> MatrixSummary:
        opts = self.options
        summary = MatrixSummary(total=len(cells))
        started = time.perf_counter()
        limit = asyncio.Semaphore(opts.concurrency)
        per_provider: dict[str, asyncio.Semaphore] = {}
        recording = opts.record_mode != "none"

        def provider_slot(cell: Cell) -> asyncio.Semaphore:
            if cell.provider not in per_provider:
                n = opts.provider_concurrency
                if n is None:
                    n = 1 if recording and not cell.is_mock else opts.concurrency
                per_provider[cell.provider] = asyncio.Semaphore(n)
            return per_provider[cell.provider]

        async def one(cell: Cell) -> None:
            async with provider_slot(cell), limit:
                if self._stop.is_set():
                    return
                row = await self._cell(cell)
            self.sink.write_result(row)
            summary.done += 1
            if row["error"] is not None:
                summary.crashed += 1
                summary.errors.append(f"{cell.key}: {row['error']}")
            if row["passed"]:
                summary.passed += 1
            else:
                summary.failed += 1
            summary.cost_usd += row["cost_usd"] or 0.0
            if on_row is not None:
                on_row(row, summary)

        tasks = [asyncio.create_task(one(c), name=c.key) for c in cells]
        stopper = asyncio.create_task(self._stop.wait())
        pending: set[asyncio.Future[Any]] = set(tasks)
        try:
            while pending:
                done, pending = await asyncio.wait(
                    pending | {stopper}, return_when=asyncio.FIRST_COMPLETED
                )
                pending.discard(stopper)
                if stopper in done:
                    summary.interrupted = True
                    for task in pending:
                        task.cancel()
                    await asyncio.gather(*pending, return_exceptions=True)
                    break
        finally:
            stopper.cancel()
            summary.elapsed_s = time.perf_counter() - started
            summary.skipped = summary.total - summary.done
        return summary

    async def _cell(self, cell: Cell) -> dict[str, Any]:
        opts = self.options
        task = cell.task
        workspace = Path(tempfile.mkdtemp(prefix="harness-cell-"))
        cassette = cell.cassette(opts.cassettes)
        started = datetime.now(UTC)
        try:
            if cassette is None:
                provider_opts: dict[str, Any] = task.mock_provider_opts() or {}
            else:
                transport = CassetteTransport(
                    cassette,
                    record_mode=opts.record_mode,
                    rerecord_hint=rerecord_command(cell),
                    secrets=profile_secrets(cell.provider),
                    ignore_hosts=opts.ignore_hosts,
                    drop_unused_requests=opts.record_mode == "all",
                )
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
            verdict = grade(task.expect, result, workspace)
            return result_row(cell, result, verdict, cassette, started=started)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a crashing cell is a failed row; the matrix goes on
            return crashed_row(cell, exc, cassette, started=started)
        finally:
            shutil.rmtree(workspace, ignore_errors=True)


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


def _json(value: Any) -> str | None:
    if value is None:
        return None
    return json.dumps(value, default=_default, ensure_ascii=False)


def _default(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    from dataclasses import asdict, is_dataclass

    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    return str(value)


def _base(cell: Cell, cassette: Path | None, started: datetime) -> dict[str, Any]:
    return {
        "cell_key": cell.key,
        "suite": cell.suite.suite,
        "task_id": cell.task.id,
        "mode": cell.mode,
        "provider": cell.provider,
        "epoch": cell.epoch,
        "cassette": str(cassette) if cassette is not None else None,
        "started_at": started,
        "finished_at": datetime.now(UTC),
    }


def result_row(
    cell: Cell, result: Result, verdict: Grade, cassette: Path | None, *, started: datetime
) -> dict[str, Any]:
    """The ``results`` row of a finished cell (DESIGN.md section 6)."""
    snapshot = result.no_progress_snapshot
    return {
        **_base(cell, cassette, started),
        "model": result.model,
        "passed": verdict.passed,
        "score": verdict.score,
        "grader_explanation": verdict.explanation,
        "finish_reason": result.finish_reason.value,
        "category": result.category.value,
        "iterations": result.iterations,
        "tool_calls": result.tool_calls_made,
        "llm_calls": result.llm_calls,
        "input_tokens": result.usage.input_tokens,
        "output_tokens": result.usage.output_tokens,
        "cost_usd": result.cost_usd,
        "duration_ms": result.duration_ms,
        "trace_id": result.trace_id,
        "deliverable": _json(result.deliverable),
        "text": result.text,
        "halted_reason": result.halted_reason,
        "error_diagnostic": _json(result.error_diagnostic),
        "no_progress_snapshot": _json(snapshot) if snapshot is not None else None,
        "calls": _json(result.calls),
        "error": None,
    }


def crashed_row(
    cell: Cell, exc: BaseException, cassette: Path | None, *, started: datetime
) -> dict[str, Any]:
    """A cell that could not run (a corrupt cassette, a bad option, a bug): failed, with why."""
    return {
        **_base(cell, cassette, started),
        "model": None,
        "passed": False,
        "score": 0.0,
        "grader_explanation": "the cell did not run",
        "finish_reason": None,
        "category": None,
        "iterations": 0,
        "tool_calls": 0,
        "llm_calls": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "cost_usd": None,
        "duration_ms": 0.0,
        "trace_id": None,
        "deliverable": None,
        "text": None,
        "halted_reason": None,
        "error_diagnostic": None,
        "no_progress_snapshot": None,
        "calls": None,
        "error": f"{type(exc).__name__}: {exc}",
    }
