"""A tool raising ``KeyboardInterrupt`` under the Ray executor (issue 34, adversary round 20,
part A).

Under the local executor a ``KeyboardInterrupt`` raised in a cell stops the run as Ctrl-C does:
``interrupted``, exit 130, the resume command. Under Ray the worker's runner stopped its batch
and ``run_batch`` handed back only the cells that had finished: the cell that raised and the
others of its batch never came back, the executor's summary was not interrupted, and
``harness run`` printed ``2/4 cells, 2 passed, 0 errored``, exit 0, the run ``finished`` (two
cells lost without a word). Found with the real CLI (``--executor ray --workers 1
--concurrency 2``); here a real in-process Ray cluster. Fixed by the lead: ``Batch``
says whether the worker's runner stopped (``interrupted``), and ``RayRunner`` then stops the
run as ``request_stop`` does (the run ``interrupted``, exit 130, ``--resume`` runs the rest).
Fails on f0b3b1e."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import ModuleType

import pytest

from harness.bench._matrix import expand
from harness.bench._ray_executor import RayOptions, RayRunner
from harness.bench._runner import CellOutcome, RunnerOptions
from harness.suites._load import load_suites

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

SUITE = """\
suite: intr
tasks:
  - {id: a, prompt: hi, expect: {kind: contains, value: hi},
     mock: {latency_s: 0.3, turns: [{text: hi}]}}
  - id: x
    prompt: go
    tools: ["tests.ray_cluster.interrupting_tool:interrupts"]
    expect: {kind: contains, value: done}
    mock: {turns: [{tool_calls: [{name: interrupts, arguments: {}}]}, {text: done}]}
  - {id: b, prompt: hi, expect: {kind: contains, value: hi},
     mock: {latency_s: 0.3, turns: [{text: hi}]}}
  - {id: c, prompt: hi, expect: {kind: contains, value: hi},
     mock: {latency_s: 0.3, turns: [{text: hi}]}}
"""


def test_a_cell_interrupting_under_ray_is_not_lost_silently(
    ray_local: ModuleType, tmp_path: Path
) -> None:
    (tmp_path / "s.yaml").write_text(SUITE)
    suites = load_suites([tmp_path / "s.yaml"])
    cells = expand(suites, ["react"], ["mock"], 1)
    got: list[CellOutcome] = []
    runner = RayRunner(RunnerOptions(concurrency=2), got.append, suites=suites,
                       ray_options=RayOptions(workers=1, batch_size=4))  # fmt: skip
    summary = asyncio.run(runner.run(cells))
    came_back = {o.cell.task.id for o in got}
    # As the local executor: the run stops interrupted, or every cell comes back.
    assert summary.interrupted or came_back == {"a", "x", "b", "c"}, (came_back, summary)
