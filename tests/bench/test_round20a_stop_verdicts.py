"""Cells that end as the run stops (issue 34, adversary round 20, part A).

``Runner.request_stop`` (Ctrl-C, SIGTERM) kills the run's BFCL and python-grader workers at
once; the cells in flight are cancelled a few turns of the event loop later, at their next
await. A cell whose BFCL call or grading had just failed for it (``WorkerStopped``) ran on to
its end within those turns and was stored: Ctrl-C 2.2 s into a replay of ``bfcl_multi_turn`` at
``--concurrency 16`` stored its three ``multi_turn_base_0`` mock cells **failed** (passed in a
quiet run; 220 input tokens for 3,632) and three as grader errors, and ``--resume`` kept the
failed ones (3 runs in 3). A cell that ends once the stop is asked for is not stored now
(``--resume`` runs it). Here the grading asks for the stop and answers at once, as a grading
whose worker was killed does."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from harness.bench import _runner
from harness.bench._matrix import expand
from harness.bench._runner import CellOutcome, Runner, RunnerOptions
from harness.grading._grade import Grade
from harness.suites._load import load_suites

SUITE = (
    "suite: s\ntasks:\n"
    "  - {id: a, prompt: hi, expect: {kind: contains, value: d}, mock: {turns: [{text: d}]}}\n"
    "  - {id: b, prompt: hi, expect: {kind: contains, value: d}, mock: {turns: [{text: d}]}}\n"
)


@pytest.mark.timeout(120)
def test_a_cell_ending_after_the_stop_is_not_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "s.yaml").write_text(SUITE)
    cells = expand(load_suites([tmp_path / "s.yaml"]), ["react"], ["mock"], 1)
    got: list[CellOutcome] = []
    runner = Runner(RunnerOptions(concurrency=1), got.append)

    async def killed(*args: Any) -> Grade:
        runner.request_stop()  # Ctrl-C: the grading's worker is killed; it answers at once
        return Grade(False, 0.0, "BFCL's workers were stopped")

    monkeypatch.setattr(_runner, "_grade", killed)
    summary = asyncio.run(runner.run(cells))
    assert summary.interrupted
    assert [(o.cell.key, o.status) for o in got] == []  # [("s/a/...", "failed")] on 218441d
