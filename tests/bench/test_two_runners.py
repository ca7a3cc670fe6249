"""Two runners in one process (as a Ray worker runs overlapping batches) own their own grader
workers and grep worker: stopping one mid-run never touches the other, which finishes every
cell with real verdicts."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

import pytest

from harness.bench._matrix import expand
from harness.bench._outcome import CellOutcome, MatrixSummary
from harness.bench._runner import Runner, RunnerOptions
from harness.suites._load import load_suites

CHECKS = textwrap.dedent(
    """
    import time

    def slow_check(result, workspace):
        time.sleep(0.3)  # long enough for the other runner to be stopped meanwhile
        return (result.text or "").strip() == "found", "the answer is 'found'"
    """
)


def _suite(folder: Path, name: str, tasks: int) -> Path:
    folder.mkdir()
    (folder / "two_runner_checks.py").write_text(CHECKS, encoding="utf-8")
    body = "".join(
        textwrap.dedent(
            f"""
              - id: t{i}
                prompt: "Is needle in notes.txt?"
                workspace: {{files: {{notes.txt: "hay\\nneedle {i}\\nhay\\n"}}}}
                expect: {{kind: python, function: "two_runner_checks:slow_check", timeout_s: 20}}
                mock:
                  turns:
                    - tool_calls: [{{name: grep, arguments: {{pattern: "needle", path: "."}}}}]
                    - text: "found"
            """
        )
        for i in range(tasks)
    )
    path = folder / f"{name}.yaml"
    path.write_text(
        f"suite: {name}\ndefaults: {{tools: [grep], max_iterations: 4}}\ntasks:\n{body}",
        encoding="utf-8",
    )
    return path


@pytest.mark.slow  # 16 cells, each graded by a python grader in a process of its own
@pytest.mark.timeout(120)
async def test_stopping_one_runner_leaves_the_other_whole(tmp_path: Path) -> None:
    a_cells = expand(load_suites([_suite(tmp_path / "a", "runner_a", 8)]), ["react"], ["mock"], 1)
    b_cells = expand(load_suites([_suite(tmp_path / "b", "runner_b", 8)]), ["react"], ["mock"], 1)
    a_out: list[CellOutcome] = []
    b_out: list[CellOutcome] = []
    options = RunnerOptions(cassettes=tmp_path / "cassettes", concurrency=2)
    # list.append is a valid Sink, but Sink.__call__'s parameter is not positional-only
    a = Runner(options, a_out.append)
    b = Runner(RunnerOptions(cassettes=tmp_path / "cassettes", concurrency=2), b_out.append)

    def stop_a_after_two(outcome: CellOutcome, summary: MatrixSummary) -> None:
        if summary.done == 2:
            a.request_stop()  # kills a's graders (busy ones too) and cancels its cells

    a_summary, b_summary = await asyncio.gather(a.run(a_cells, stop_a_after_two), b.run(b_cells))
    assert a_summary.interrupted
    assert a_summary.done < len(a_cells)
    assert b_summary.done == len(b_cells) == 8
    assert not b_summary.interrupted
    assert [o.status for o in b_out] == ["passed"] * 8, [o.error_cause for o in b_out]
    assert all(o.grade is not None and not o.grade.error for o in b_out)
    assert a.graders is not b.graders
    assert a.graders.stopped()
    assert not b.graders.stopped()
    assert b.graders.workers == 0  # b closed its idle workers when it ended
