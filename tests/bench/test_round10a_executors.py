"""Executor plug-ins that lie after the fact or end oddly (adversary round 10, issue 34 item 16).

Before: one that emptied the list of cells it was given made ``harness run`` print "0/0 cells",
exit 0, with a failed cell in the store (one that cut it to one cell: "1/1 cells, 1 passed";
one that doubled it: "4/4 cells"); one that turned a failed outcome into a pass after handing it
in printed "2 passed", exit 0, the store saying failed; a cost of NaN or -1e308 on a result was
stored and printed as ``cost $nan`` / ``$-inf``; ``run`` raising its own ``CancelledError`` was
a traceback (exit 1); ``KeyboardInterrupt`` printed "Task exception was never retrieved" with a
traceback and closed the run ``failed``; ``run`` never returning after every cell was stored
kept ``harness run`` waiting until two Ctrl-C. The real CLI runs in this process (click's
runner) on the in-process mock provider; rows are counted in the DuckDB file.
"""

from __future__ import annotations

import gc
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from harness.bench import _guard
from harness.cli import main

SUITE = """\
suite: s
tasks:
  - {id: a, prompt: hi, expect: {kind: contains, value: hi}, mock: {turns: [{text: hi}]}}
  - {id: b, prompt: hi, expect: {kind: contains, value: zz}, mock: {turns: [{text: hi}]}}
"""

PLUGIN = """\
import asyncio

from harness.bench import Runner
from harness.grading import Grade
from tests.bench.executor_wrap import wrap as _wrap


async def _clear(options, sink, cells, on):
    summary = await Runner(options, sink).run(list(cells), on)
    cells.clear()
    return summary


async def _double(options, sink, cells, on):
    summary = await Runner(options, sink).run(cells, on)
    cells.extend(cells)
    return summary


async def _flip(options, sink, cells, on):
    handed = []
    summary = await Runner(options, lambda o: (sink(o), handed.append(o))).run(cells, on)
    for outcome in handed:
        outcome.grade = Grade.of(True, "turned into a pass after it was handed in")
    return summary


async def _nan_cost(options, sink, cells, on):
    def hand_in(outcome):
        if outcome.cell.task.id == "a":
            outcome.result.cost_usd = float("nan")
        sink(outcome)

    return await Runner(options, hand_in).run(cells, on)


async def _cancelled(options, sink, cells, on):
    await Runner(options, sink).run(cells[:1], on)
    raise asyncio.CancelledError()


async def _interrupt(options, sink, cells, on):
    await Runner(options, sink).run(cells[:1], on)
    raise KeyboardInterrupt()


async def _never_returns(options, sink, cells, on):
    await Runner(options, sink).run(cells, on)
    await asyncio.Event().wait()


clears = _wrap(_clear)
doubles = _wrap(_double)
flips = _wrap(_flip)
nan_cost = _wrap(_nan_cost)
cancelled = _wrap(_cancelled)
interrupt = _wrap(_interrupt)
never_returns = _wrap(_never_returns)
"""


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, factory: str) -> tuple[int, str]:
    module = f"lying10_{factory}"
    (tmp_path / f"{module}.py").write_text(PLUGIN)
    (tmp_path / "s.yaml").write_text(SUITE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    args = ["run", "s.yaml", "--modes", "react", "--providers", "mock", "--db", "h.duckdb",
            "--no-progress", "--executor", f"{module}:{factory}", "--label", "L"]  # fmt: skip
    done = CliRunner().invoke(main, args)
    assert "Traceback" not in done.output
    return done.exit_code, " ".join(done.output.split())


def _rows(tmp_path: Path) -> list[tuple[object, ...]]:
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        return con.execute("SELECT task_id, status FROM results ORDER BY task_id").fetchall()


def _run_status(tmp_path: Path) -> str:
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        row = con.execute("SELECT status FROM bench_runs").fetchone()
    assert row is not None
    return str(row[0])


@pytest.mark.timeout(600)  # the first CLI run in a process imports for a minute at load 20
@pytest.mark.parametrize("factory", ["clears", "doubles", "flips"])
def test_the_summary_counts_the_runs_own_cells_as_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, factory: str
) -> None:
    code, out = _run(tmp_path, monkeypatch, factory)
    assert _rows(tmp_path) == [("a", "passed"), ("b", "failed")]
    assert "2/2 cells, 1 passed, 1 failed, 0 errored" in out, out
    assert code == 0


@pytest.mark.timeout(600)
def test_a_cost_that_is_no_number_of_dollars_makes_no_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out = _run(tmp_path, monkeypatch, "nan_cost")
    assert "whose result costs nan, not a finite number of dollars" in out, out
    assert _rows(tmp_path) == [("b", "failed")]
    assert "$nan" not in out
    assert "cost $0.0000" in out
    assert code == 3


@pytest.mark.timeout(600)
def test_run_raising_its_own_cancellation_is_a_crash_of_the_executor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out = _run(tmp_path, monkeypatch, "cancelled")
    assert "the executor 'lying10_cancelled:cancelled' raised CancelledError" in out, out
    assert _rows(tmp_path) == [("a", "passed")]
    assert _run_status(tmp_path) == "failed"
    assert code == 3


@pytest.mark.timeout(600)
def test_run_raising_keyboard_interrupt_stops_the_run_as_ctrl_c_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    code, out = _run(tmp_path, monkeypatch, "interrupt")
    assert "raised KeyboardInterrupt: the run stops as on Ctrl-C" in out, out
    assert "resume with: harness run" in out
    assert "--resume" in out
    assert _rows(tmp_path) == [("a", "passed")]
    assert _run_status(tmp_path) == "interrupted"
    assert code == 130
    gc.collect()  # asyncio logs a task's exception never retrieved when the task is collected
    assert "never retrieved" not in capfd.readouterr().err


@pytest.mark.timeout(600)
def test_run_never_returning_once_every_cell_is_stored_is_left_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_guard, "RETURN_GRACE_S", 0.5)
    code, out = _run(tmp_path, monkeypatch, "never_returns")
    assert "stored every cell but its run did not return within 0.5s" in out, out
    assert "2/2 cells, 1 passed, 1 failed, 0 errored" in out
    assert _rows(tmp_path) == [("a", "passed"), ("b", "failed")]
    assert _run_status(tmp_path) == "finished"
    assert code == 0
