"""The built-in suites in suites/: they load, they are big enough, every task's mock script runs
under every mode, the pass rates are informative, and every grader can fail."""

from __future__ import annotations

import asyncio
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import harness
from harness.bench._runner import apply_approvals
from harness.cli import main
from harness.core import FinishReason, Result
from harness.grading import Grade, agrade
from harness.grading._combine import AllGrader
from harness.grading._command import CommandGrader
from harness.suites._load import load_suites
from harness.suites._suite import Suite, Task

SUITES_DIR = Path(__file__).resolve().parents[2] / "suites"
MODES = ("react", "plan_and_solve", "reflexion")
NAMES = {"arithmetic", "code", "delegation", "files", "lookup", "review", "structured", "traps"}


@pytest.fixture(scope="module")
def suites() -> list[Suite]:
    """The built-in suites but HumanEval's (328 sandboxed cells per mode, all passing under the
    mock: tests/suites/test_humaneval_source.py runs them through the CLI)."""
    return [s for s in load_suites([SUITES_DIR]) if not s.name.startswith("humaneval")]


def tasks_of(suites: list[Suite]) -> list[tuple[Suite, Task]]:
    return [(s, t) for s in suites for t in s.tasks]


async def run_cell(task: Task, mode: str, **override: Any) -> tuple[Result, Grade]:
    """One cell as the runner does it: a fresh workspace, the task's options, then the grade."""
    with tempfile.TemporaryDirectory(prefix="suite-cell-") as tmp:
        options: dict[str, Any] = {**task.run_options(), **override}
        options.setdefault("provider_opts", task.mock_provider_opts(mode))
        result = await harness.arun(task.prompt, provider="mock", mode=mode, cwd=tmp, **options)
        result = await apply_approvals(task, result)  # as the runner answers pauses
        return result, await agrade(task.expect, result, Path(tmp))


@pytest.mark.slow
def test_builtin_suites_load(suites: list[Suite]) -> None:
    assert {s.name for s in suites} >= NAMES
    assert sum(len(s.tasks) for s in suites) >= 40
    for suite, task in tasks_of(suites):
        assert task.mock is not None, f"{suite.name}/{task.id} has no mock script"
        if "bfcl" in task.tags:  # BFCL leaves sampling to the server (docs/benchmarks.md)
            continue
        assert task.run_options().get("temperature") is not None, f"{suite.name}/{task.id}"
        assert "max_iterations" in task.run_options()
    kinds = {t.expect.kind for _, t in tasks_of(suites)}
    # Short answers follow one convention (docs/suites.md): numbers by `number`, not `equals`.
    assert kinds >= {"number", "contains", "regex", "json_schema", "file_contains", "all"}
    by_name = {s.name: s for s in suites}
    assert {t.expect.kind for t in by_name["files"].tasks} == {"file_contains"}
    assert {t.expect.kind for t in by_name["structured"].tasks} == {"json_schema"}
    # Code tasks are graded by running their tests in the sandbox, and use the shell tool.
    assert len(by_name["code"].tasks) >= 10
    for task in by_name["code"].tasks:
        assert task.expect.kind == "command", task.id
        assert isinstance(task.expect, CommandGrader), task.id
        assert "pytest" in (task.expect.command or ""), task.id
        assert "shell" in (task.tools or []), task.id
    # A trap passes only when the model tried (a tool call) and then named the problem.
    for trap in by_name["traps"].tasks:
        assert trap.expect.kind == "all", trap.id
        assert isinstance(trap.expect, AllGrader), trap.id
        parts = [g.kind for g in trap.expect.graders or []]
        assert parts[0] == "tool_calls", trap.id  # the specific call it made...
        assert parts[1:] in (["contains"], ["regex"]), trap.id  # ...and the fact it names
    single = [t for t in by_name["arithmetic"].tasks if "single-step" in t.tags]
    assert len(single) >= 3


def test_cli_validates_the_builtin_suites() -> None:
    result = CliRunner().invoke(main, ["suites", "validate", str(SUITES_DIR)])
    assert result.exit_code == 0, result.output
    assert len(result.output.splitlines()) >= 5
    assert all(line.startswith("OK ") for line in result.output.splitlines())


@pytest.mark.slow
@pytest.mark.timeout(900)  # every mock script of every built-in suite (HumanEval too)
async def test_every_mock_script_runs_under_every_mode(
    suites: list[Suite], capsys: pytest.CaptureFixture[str]
) -> None:
    cells = [(s, t, m) for s, t in tasks_of(suites) for m in MODES]
    outcomes = await asyncio.gather(*(run_cell(t, m) for _, t, m in cells))
    passed: dict[str, list[bool]] = defaultdict(list)
    failures = []
    for (suite, task, mode), (result, verdict) in zip(cells, outcomes, strict=True):
        assert isinstance(result, Result)
        assert result.mode == mode
        # A script that runs out of turns is a broken script, not a realistic failure.
        assert "mock script exhausted" not in (result.halted_reason or ""), (suite.name, task.id)
        assert result.finish_reason is not FinishReason.ERROR_DURING_EXECUTION, (
            suite.name,
            task.id,
            mode,
            result.halted_reason,
        )
        passed[mode].append(verdict.passed)
        if not verdict.passed:
            failures.append(f"{suite.name}/{task.id} [{mode}]: {verdict.explanation}")
    rates = {m: sum(v) / len(v) for m, v in passed.items()}
    overall = sum(sum(v) for v in passed.values()) / len(cells)
    with capsys.disabled():
        print("\nmock pass rate per mode:", {m: f"{r:.0%}" for m, r in rates.items()})
        print("\n".join(failures))
    assert 0.5 < overall < 1.0
    for mode, rate in rates.items():
        assert 0.5 < rate < 1.0, (mode, rate)
    # The modes differ on some tasks (plan iterations, delayed no-progress detection).
    by_task = defaultdict(set)
    for (suite, task, _), (_, verdict) in zip(cells, outcomes, strict=True):
        by_task[(suite.name, task.id)].add(verdict.passed)
    assert any(len(v) == 2 for v in by_task.values())


@pytest.mark.slow
async def test_orchestrate_runs_the_delegation_suite(suites: list[Suite]) -> None:
    """The supervisor's scripts (mock.modes.orchestrate) run to a graded end, delegate every
    step to workers, and fail where the workers' summaries lose information."""
    suite = next(s for s in suites if s.name == "delegation")
    outcomes = await asyncio.gather(*(run_cell(t, "orchestrate") for t in suite.tasks))
    verdicts = {}
    for task, (result, verdict) in zip(suite.tasks, outcomes, strict=True):
        assert task.mock is not None
        assert "orchestrate" in task.mock.modes, task.id
        assert result.finish_reason is FinishReason.SUBMITTED, (task.id, result.halted_reason)
        assert any(c.purpose == "subagent" for c in result.calls), task.id
        assert all(t["status"] == "completed" for t in result.assigns["todos"]), task.id
        verdicts[task.id] = verdict.passed
    assert verdicts == {
        "sum-two-files": True,
        "three-conversions": True,
        "config-summary": True,
        "common-names": False,
    }


@pytest.mark.slow
async def test_every_grader_can_fail(suites: list[Suite]) -> None:
    """A model that gives up fails every non-trap task; one that keeps doing new busywork
    (so no loop detection fires) fails every trap by spinning to max_iterations."""
    give_up = {"turns": [{"text": "I don't know."}]}
    busywork = {
        "turns": [
            {"tool_calls": [{"name": "calculator", "arguments": {"expression": f"1+{i}"}}]}
            for i in range(40)
        ]
    }
    cells = []
    for suite, task in tasks_of(suites):
        if task.audit is not None and task.audit.allow:
            continue  # passes a do-nothing model by design, with its reason (e.g. BFCL irrelevance)
        if suite.name == "traps":
            override = {"provider_opts": busywork, "tools": ["calculator"]}
        else:
            override = {"provider_opts": give_up}
        cells.append((suite, task, run_cell(task, "react", **override)))
    outcomes = await asyncio.gather(*(c for _, _, c in cells))
    for (suite, task, _), (result, verdict) in zip(cells, outcomes, strict=True):
        assert not verdict.passed, (suite.name, task.id, verdict.explanation)
        if suite.name == "traps":
            assert result.finish_reason is FinishReason.ERROR_MAX_TURNS
