"""A cell holds its provider's slot while it talks to the model, not while it is graded.

Recording runs one cell per HTTP provider at a time. The slot used to be held through grading
too, so a BFCL grading re-executing a slow call for its whole minute (or any slow grader) kept
the next cell from starting (issue 34: the other cells' requests came 61-64 s after the slow
call was stopped). The runner and the mock provider here are real; only the grading step is
wrapped to note when it starts and ends.
"""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path
from typing import Any

import pytest

from harness.api import arun as harness_arun
from harness.bench import _runner
from harness.bench._matrix import expand
from harness.bench._runner import Runner, RunnerOptions
from harness.suites._load import load_suites

SUITE = textwrap.dedent(
    """
    suite: two
    tasks:
      - id: t0
        prompt: "Say 1."
        expect: {kind: contains, value: "1"}
        mock: {turns: [{text: "1"}]}
      - id: t1
        prompt: "Say 2."
        expect: {kind: contains, value: "2"}
        mock: {turns: [{text: "2"}]}
    """
)


def test_the_next_cell_talks_to_the_provider_while_the_last_one_is_graded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "two.yaml").write_text(SUITE, encoding="utf-8")
    cells = expand(load_suites([tmp_path / "two.yaml"]), ["react"], ["mock"], 1)
    log: list[tuple[str, str]] = []
    real_arun, real_grade = harness_arun, _runner._grade

    async def arun(prompt: str, **kw: Any) -> Any:
        log.append(("talk", prompt))
        return await real_arun(prompt, **kw)

    async def grade(task: Any, *args: Any) -> Any:
        log.append(("grade", task.id))
        if task.id == "t0":  # a slow grading: waits (up to 5 s) for the next cell to talk
            for _ in range(500):
                if ("talk", "Say 2.") in log:
                    break
                await asyncio.sleep(0.01)
        verdict = await real_grade(task, *args)
        log.append(("graded", task.id))
        return verdict

    monkeypatch.setattr(_runner, "arun", arun)
    monkeypatch.setattr(_runner, "_grade", grade)
    runner = Runner(RunnerOptions(concurrency=2, provider_concurrency=1), lambda o: None)
    summary = asyncio.run(runner.run(cells))
    assert summary.passed == 2, summary
    assert log.index(("talk", "Say 2.")) < log.index(("graded", "t0")), log
    # One conversation at a time still: t1 began talking only once t0 was done talking.
    assert log.index(("grade", "t0")) < log.index(("talk", "Say 2.")), log
