"""An actor that stops answering under the Ray executor (issue 34, found by adversary round 19,
part A; fixed by the lead in stop 46).

A tool that cancels every task of its actor's event loop (Ray's own included) broke the actor:
its batch failed after Ray's retries, and the run then waited, 3 of 4 cells stored, until a
signal ended it (``timeout``'s SIGTERM at 180 s); the local executor ends the same run in one
line. The driver now asks an actor that sent nothing back for ``liveness_s`` for its pid, and
one that does not answer within ``liveness_s`` more is given up: its batches come back as
crashed cells (status ``error``: exit 3, ``--retry-errors`` runs them again), the batches
still queued run on the actors left, or come back crashed when none is left. A real
in-process Ray cluster."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from types import ModuleType

import pytest

from harness.bench._matrix import expand
from harness.bench._ray_executor import RayOptions, RayRunner
from harness.bench._runner import CellOutcome, RunnerOptions
from harness.suites._load import load_suites

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

_TASK = """\
  - id: {id}
    prompt: go
    tools: ["tests.ray_cluster.cancelling_tool:cancels_all"]
    expect: {{kind: contains, value: done}}
    mock: {{turns: [{{tool_calls: [{{name: cancels_all, arguments: {{}}}}]}}, {{text: done}}]}}
"""
_PLAIN = (
    "  - {{id: {id}, prompt: hi, expect: {{kind: contains, value: hi}}, "
    "mock: {{turns: [{{text: hi}}]}}}}\n"
)


def test_an_actor_that_stops_answering_is_given_up_and_its_cells_come_back_errored(
    ray_local: ModuleType, tmp_path: Path
) -> None:
    text = "suite: breaks\ntasks:\n" + _TASK.format(id="a")
    text += "".join(_PLAIN.format(id=i) for i in ("b", "c", "d"))
    (tmp_path / "s.yaml").write_text(text)
    suites = load_suites([tmp_path / "s.yaml"])
    cells = expand(suites, ["react"], ["mock"], 1)
    got: list[CellOutcome] = []
    options = RayOptions(workers=1, batch_size=1, max_restarts=0, max_task_retries=0,
                         liveness_s=5.0)  # fmt: skip
    runner = RayRunner(RunnerOptions(concurrency=1), got.append, suites=suites,
                       ray_options=options)  # fmt: skip
    t0 = time.perf_counter()
    summary = asyncio.run(runner.run(cells))
    took = time.perf_counter() - t0
    keys = sorted(o.cell.task.id for o in got)
    assert keys == ["a", "b", "c", "d"], (keys, took)  # every cell back, each once
    assert summary.done == 4
    assert not summary.interrupted
    errors = {o.cell.task.id: o.error for o in got if o.status == "error"}
    assert "a" in errors, errors
    assert all(e and e.startswith("Ray worker failed") for e in errors.values()), errors
    assert all(o.status == "passed" for o in got if o.status != "error")
