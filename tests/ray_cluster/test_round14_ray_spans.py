"""A cell that crashes before it has a result (a tool raising ``SystemExit``) under the Ray
executor: its trace keeps its root span, as under the local runner. Before: the worker's tracer
held the root for a verdict that never came and wrote it only as the actor closed, into the
scratch folder removed with it; the trace had its iteration, chat and tool spans and no root
(20 spans against the local runner's 21 for the same five cells). A real in-process Ray
cluster and the real span file."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from harness.bench._matrix import expand
from harness.bench._ray_executor import RayOptions, RayRunner
from harness.bench._runner import CellOutcome, Runner, RunnerOptions
from harness.suites._load import load_suites
from harness.telemetry import configure_tracing

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

SUITE = """\
suite: exits
tasks:
  - id: ex
    prompt: go
    tools: ["tests.ray_cluster.exiting_tool:exits"]
    expect: {kind: contains, value: done}
    mock: {turns: [{tool_calls: [{name: exits, arguments: {}}]}, {text: done}]}
  - {id: ok, prompt: hi, expect: {kind: contains, value: hi}, mock: {turns: [{text: hi}]}}
"""


def _names(path: Path) -> Counter[str]:
    return Counter(json.loads(line)["name"] for line in path.read_text().splitlines())


def test_a_crashed_cell_keeps_its_root_span_under_ray(
    ray_local: ModuleType, tmp_path: Path
) -> None:
    (tmp_path / "s.yaml").write_text(SUITE)
    suites = load_suites([tmp_path / "s.yaml"])
    cells = expand(suites, ["react"], ["mock"], 1)
    ray_trace, local_trace = tmp_path / "ray.jsonl", tmp_path / "local.jsonl"
    got: list[CellOutcome] = []
    runner = RayRunner(RunnerOptions(concurrency=2), got.append, suites=suites,
                       ray_options=RayOptions(workers=1), trace_file=ray_trace)  # fmt: skip
    asyncio.run(runner.run(cells))
    assert {o.cell.task.id: o.error for o in got} == {"ex": "SystemExit: 7", "ok": None}

    tracing = configure_tracing(file=local_trace, hold_roots=True)
    try:
        options = RunnerOptions(concurrency=2, tracer_provider=tracing.tracer_provider)
        asyncio.run(Runner(options, lambda o: None).run(cells))
    finally:
        tracing.shutdown()
    assert _names(ray_trace)["invoke_agent react exits/ex"] == 1  # before: 0
    assert _names(ray_trace) == _names(local_trace)
