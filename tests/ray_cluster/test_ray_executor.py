"""The Ray executor on a real in-process local cluster (``ray.init(num_cpus=2)``, one per module):
the same results as the local runner, spans back to the driver, and a worker process killed
mid-run loses and duplicates nothing."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import tempfile
from pathlib import Path
from types import ModuleType

import pytest
from ray_helpers import latency_suite

from harness.bench._matrix import Cell, expand
from harness.bench._ray_executor import RayOptions, RayRunner
from harness.bench._runner import CellOutcome, MatrixSummary, Runner, RunnerOptions
from harness.suites._load import load_suites
from harness.suites._suite import Suite

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(300),
]  # a Ray cluster's start counts too, on 2 busy cores
SUITES = ROOT / "suites"


def _facts(outcome: CellOutcome) -> tuple[object, ...]:
    r = outcome.result
    assert r is not None, outcome.error
    return (
        outcome.status,
        r.finish_reason,
        r.tool_calls_made,
        r.llm_calls,
        r.usage.input_tokens,
        r.usage.output_tokens,
        r.text,
    )


def _ray_run(
    suites: list[Suite],
    cells: list[Cell],
    options: RayOptions,
    trace_file: Path | None = None,
    on_first: object = None,
) -> tuple[RayRunner, list[CellOutcome], MatrixSummary]:
    got: list[CellOutcome] = []
    runner = RayRunner(
        RunnerOptions(cassettes=ROOT / "cassettes", concurrency=2),
        # list.append is a valid Sink, but Sink.__call__'s parameter is not positional-only
        got.append,
        suites=suites,
        ray_options=options,
        trace_file=trace_file,
    )

    def on_outcome(outcome: CellOutcome, summary: MatrixSummary) -> None:
        if summary.done == 1 and callable(on_first):
            on_first(runner)

    summary = asyncio.run(runner.run(cells, on_outcome))
    return runner, got, summary


def test_ray_gives_the_local_results_for_replayed_cells(
    ray_local: ModuleType, tmp_path: Path
) -> None:
    suites = load_suites([SUITES / "arithmetic.yaml", SUITES / "files.yaml"])
    cells = expand(suites, ["react", "reflexion"], ["mock", "llamacpp-gemma"], 1)
    trace = tmp_path / "spans.jsonl"
    runner, got, summary = _ray_run(suites, cells, RayOptions(workers=2, batch_size=8), trace)

    local: list[CellOutcome] = []
    asyncio.run(
        Runner(RunnerOptions(cassettes=ROOT / "cassettes", concurrency=2), local.append).run(cells)
    )
    assert sorted(o.cell.key for o in got) == sorted(c.key for c in cells)  # each once
    assert {o.cell.key: _facts(o) for o in got} == {o.cell.key: _facts(o) for o in local}
    assert summary.done == len(cells)
    assert not summary.interrupted
    assert summary.errored == 0
    assert len(runner.batches_by_worker) == 2  # both actors ran batches
    assert all(pid != os.getpid() for pid in runner.worker_pids)
    scratch = Path(tempfile.gettempdir())
    assert not [f for p in runner.worker_pids for f in scratch.glob(f"harness-ray-worker-{p}-*")]
    traces = {json.loads(line)["traceId"] for line in trace.read_text().splitlines()}
    assert {o.result.trace_id for o in got if o.result} <= traces


def test_a_worker_killed_mid_run_loses_and_duplicates_nothing(
    ray_local: ModuleType, tmp_path: Path
) -> None:
    suites = load_suites([latency_suite(tmp_path, 40, 0.05)])
    cells = expand(suites, ["react"], ["mock"], 1)
    killed: list[int] = []

    def kill(runner: RayRunner) -> None:  # after the first batch came back: others are running
        pid = runner.worker_pids[0]
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    runner, got, summary = _ray_run(
        suites, cells, RayOptions(workers=2, batch_size=4), on_first=kill
    )
    assert killed
    keys = [o.cell.key for o in got]
    assert len(keys) == len(set(keys)) == len(cells)  # nothing lost, nothing twice
    assert all(o.status == "passed" for o in got), [o.error_cause for o in got]
    assert summary.done == len(cells)
    assert summary.errored == 0
    pids = {pid for _, pid in runner.batches_by_worker}
    # The killed actor came back (a new pid) and ran batches: its own, retried, among them.
    assert pids - set(runner.worker_pids), "no batch ran on a restarted actor"


def test_stop_returns_interrupted_with_only_finished_cells(
    ray_local: ModuleType, tmp_path: Path
) -> None:
    suites = load_suites([latency_suite(tmp_path, 40, 0.05)])
    cells = expand(suites, ["react"], ["mock"], 1)
    _runner, got, summary = _ray_run(
        suites, cells, RayOptions(workers=2, batch_size=4), on_first=RayRunner.request_stop
    )
    assert summary.interrupted
    assert 0 < summary.done == len(got) < len(cells)
    assert summary.skipped == len(cells) - len(got)
    assert all(o.status == "passed" for o in got)
