"""A tool cancelling tasks that are not its own (issue 34, adversary round 18, part A).

An async tool runs in a task of its own; it can still reach the task awaiting it (its cell's
worker) or every task of the loop. Cancelling its cell's worker lost that cell and every cell
queued behind it: ``harness run`` printed ``0/3 cells, 0 passed, 0 failed, 0 errored``, exit 0,
nothing stored, the run ``finished``. Cancelling every task ended ``harness run`` in a
``CancelledError`` traceback, exit 1. Now the first is the cell's error (the run goes on), the
second the run's failure named in one line, exit 3. The real CLI in this process (click's
runner), the mock provider."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.suite_files import invoke_in

PLUGIN = """\
import asyncio

import harness
from tests.awaiting_task import awaiting


@harness.tool
async def cancel_my_cell(x: str) -> str:
    \"\"\"Cancels the task awaiting it.\"\"\"
    awaiting(asyncio.current_task()).cancel()
    return "ok"


@harness.tool
async def cancel_my_cell_later(x: str) -> str:
    \"\"\"Cancels the task awaiting it after ``x`` turns of the event loop.\"\"\"
    worker = awaiting(asyncio.current_task())
    loop = asyncio.get_running_loop()

    def hop(left):
        if left:
            loop.call_soon(hop, left - 1)
        else:
            worker.cancel()

    hop(int(x))
    return "ok"


@harness.tool
async def cancel_everything(x: str) -> str:
    \"\"\"Cancels every other task of the loop.\"\"\"
    me = asyncio.current_task()
    for task in asyncio.all_tasks():
        if task is not me:
            task.cancel()
    await asyncio.sleep(0.1)
    return "ok"
"""


def _suite(tool: str, x: str = "y") -> str:
    call = f"{{tool_calls: [{{name: {tool}, arguments: {{x: '{x}'}}}}]}}"
    done = "{kind: contains, value: done}"
    return (
        "suite: s\ntasks:\n"
        f"  - {{id: a, prompt: hi, tools: ['plug18c:{tool}'], expect: {done}, "
        f"mock: {{turns: [{call}, {{text: done}}]}}}}\n"
        f"  - {{id: b, prompt: hi, expect: {done}, mock: {{turns: [{{text: done}}]}}}}\n"
        f"  - {{id: c, prompt: hi, expect: {done}, mock: {{turns: [{{text: done}}]}}}}\n"
    )


def _run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tool: str, concurrency: int, x: str = "y"
) -> str:
    args = ["run", "s.yaml", "--modes", "react", "--providers", "mock", "--db", "h.duckdb",
            "--no-progress", "--concurrency", str(concurrency)]  # fmt: skip
    files = {"plug18c.py": PLUGIN, "s.yaml": _suite(tool, x)}
    done = invoke_in(tmp_path, monkeypatch, files, args)
    assert done.exception is None or isinstance(done.exception, SystemExit), done.output
    assert "Traceback" not in done.output, done.output
    return f"{done.exit_code}\n{done.output}"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("concurrency", [1, 3])
def test_a_tool_cancelling_its_cells_worker_is_that_cells_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, concurrency: int
) -> None:
    out = _run(tmp_path, monkeypatch, "cancel_my_cell", concurrency)
    assert out.startswith("3\n"), out  # 0 before, with "0/3 cells"
    assert "3/3 cells, 2 passed, 0 failed, 1 errored" in out, out
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT task_id, status, error FROM results ORDER BY 1").fetchall()
        runs = con.execute("SELECT status FROM bench_runs").fetchall()
    assert rows == [
        ("a", "error", "CancelledError: its code cancelled its task"),
        ("b", "passed", None),
        ("c", "passed", None),
    ]  # nothing stored before
    assert runs == [("finished",)]


@pytest.mark.timeout(120)
def test_a_tool_cancelling_every_task_fails_the_run_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _run(tmp_path, monkeypatch, "cancel_everything", 1)
    assert out.startswith("3\n"), out  # a CancelledError traceback, exit 1, before
    assert "the executor 'local' raised CancelledError" in out, out
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        runs = con.execute("SELECT status, error FROM bench_runs").fetchall()
    assert runs == [("failed", "the executor 'local' raised CancelledError")]


@pytest.mark.timeout(300)
def test_a_later_cancel_of_the_worker_loses_no_cell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Between cells (in the worker's own awaits) the cancel ended the worker: "1/3 cells, 1
    # passed, 0 errored", exit 0, the rest never run. Now it lands on a cell or on nothing.
    for hops in range(0, 48, 2):
        folder = tmp_path / f"h{hops}"
        folder.mkdir()
        out = _run(folder, monkeypatch, "cancel_my_cell_later", 1, str(hops))
        assert "3/3 cells" in out, (hops, out)
        assert out.startswith(("0\n", "3\n")), (hops, out)
