"""The executor seam without a Ray cluster: the Ray worker's batch code run in-process (what it
sends back must pickle and match the local runner), and `--executor` input checks.

The Ray cluster tests are in tests/ray (run by `nox -s ray`).
"""

from __future__ import annotations

import asyncio
import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from harness.bench._matrix import expand
from harness.bench._ray_worker import Batch, CellWorker, WorkerOptions, spec_of
from harness.bench._runner import CellOutcome, Runner, RunnerOptions
from harness.bench._session import BenchRequest, run_bench
from harness.errors import ConfigError, ProviderError
from harness.suites._load import load_suites

ROOT = Path(__file__).resolve().parents[2]
SUITES = ROOT / "suites"


def _facts(outcome: CellOutcome) -> tuple[object, ...]:
    r = outcome.result
    assert r is not None, outcome.error
    return (
        outcome.status,
        r.finish_reason,
        r.iterations,
        r.tool_calls_made,
        r.usage.input_tokens,
        r.usage.output_tokens,
        r.text,
    )


@pytest.mark.slow  # two suites' matrix, run twice (the worker, the local runner)
def test_a_worker_batch_pickles_and_matches_the_local_runner(tmp_path: Path) -> None:
    suites = load_suites([SUITES / "arithmetic.yaml", SUITES / "files.yaml"])
    cells = expand(suites, ["react", "reflexion"], ["mock"], 1)
    worker = CellWorker(suites, WorkerOptions(cassettes=(ROOT / "cassettes"), concurrency=3))
    specs = [spec_of(c, ROOT / "cassettes") for c in cells]
    batch = pickle.loads(pickle.dumps(asyncio.run(worker.run_batch(specs))))
    assert isinstance(batch, Batch)
    assert sorted(o.key for o in batch.outcomes) == sorted(c.key for c in cells)

    local: list[CellOutcome] = []
    # list.append is a valid Sink, but Sink.__call__'s parameter is not positional-only
    asyncio.run(Runner(RunnerOptions(concurrency=3), local.append).run(cells))
    by_key = {c.key: c for c in cells}
    remote = {o.key: _facts(o.outcome(by_key[o.key])) for o in batch.outcomes}
    assert remote == {o.cell.key: _facts(o) for o in local}

    # The spans of every cell came back with the batch, as span-file lines.
    lines = [json.loads(line) for line in batch.spans.splitlines()]
    traces = {line["traceId"] for line in lines}
    assert {o.result.trace_id for o in batch.outcomes if o.result} <= traces
    assert asyncio.run(worker.run_batch([])).spans == ""  # every span went back once


def test_an_errored_cell_and_a_worker_error_pickle(tmp_path: Path) -> None:
    suites = load_suites([SUITES / "arithmetic.yaml"])
    cells = expand(suites, ["react"], ["llamacpp-gemma"], 1)[:2]
    empty = tmp_path / "no-cassettes"
    worker = CellWorker(suites, WorkerOptions(cassettes=empty))
    specs = [spec_of(c, empty) for c in cells]
    batch = pickle.loads(pickle.dumps(asyncio.run(worker.run_batch(specs))))
    by_key = {c.key: c for c in cells}
    outcomes = [o.outcome(by_key[o.key]) for o in batch.outcomes]
    assert [o.status for o in outcomes] == ["error", "error"]
    assert all("cassette" in (o.error_cause or "") for o in outcomes)
    assert all(str(empty) in str(o.cassette) for o in outcomes)

    bad = spec_of(cells[0], empty)
    bad = type(bad)(bad.key, bad.suite, "no-such-task", *(bad.mode, bad.provider, 0, None))
    with pytest.raises(ConfigError, match="no task arithmetic/no-such-task") as info:
        asyncio.run(worker.run_batch([bad]))
    again = pickle.loads(pickle.dumps(info.value))
    assert type(again) is ConfigError
    assert str(again) == str(info.value)
    err = ProviderError("rate_limited", "slow down", status=429)
    assert str(pickle.loads(pickle.dumps(err))) == str(err)


@pytest.mark.slow
def test_workers_and_ray_address_need_the_ray_executor(tmp_path: Path) -> None:
    db = tmp_path / "h.duckdb"
    with pytest.raises(ConfigError, match="--workers: only with --executor ray"):
        run_bench(BenchRequest([str(SUITES / "arithmetic.yaml")], workers=2, db=db))
    with pytest.raises(ConfigError, match="--ray-address: only with --executor ray"):
        run_bench(BenchRequest([str(SUITES / "arithmetic.yaml")], ray_address="x:1", db=db))
    assert not db.exists()


@pytest.mark.slow
def test_executor_ray_without_ray_exits_2_saying_how_to_install(tmp_path: Path) -> None:
    db = tmp_path / "h.duckdb"
    code = (
        "import sys; sys.modules['ray'] = None\n"  # as if Ray were not installed
        "from harness.cli import main\n"
        f"sys.argv = ['harness', 'run', {str(SUITES / 'arithmetic.yaml')!r}, '--providers', "
        f"'mock', '--executor', 'ray', '--db', {str(db)!r}]\n"
        "main()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert proc.returncode == 2, proc.stderr
    assert "Ray is not installed" in proc.stderr
    assert "pip install 'athena-harness[ray]'" in proc.stderr
    assert not db.exists()  # checked before any run row


class _RayThatDoesNotStart:
    """A stand-in for the ``ray`` module whose local node misses Ray's start-up limit, as Ray
    2.60 did here at load 9-14 (it raises a bare ``Exception``)."""

    def is_initialized(self) -> bool:
        return False

    def init(self, **kwargs: object) -> None:
        raise Exception(  # what Ray itself raises
            "The current node timed out during startup. This could happen because some of the "
            "raylet failed to startup or the GCS has become overloaded."
        )


def test_a_ray_node_that_does_not_start_is_one_line_not_a_traceback() -> None:
    from harness.bench._ray_cluster import connect
    from harness.errors import HarnessError

    with pytest.raises(HarnessError) as caught:
        connect(_RayThatDoesNotStart(), None)
    message = str(caught.value)
    assert message.startswith(
        "--executor ray (local cluster): Ray did not start: The current node timed out during "
        "startup."
    )
    assert "ray start --head" in message
    assert "\n" not in message
