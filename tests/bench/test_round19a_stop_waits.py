"""A cell's code cancelling the run's waits for a stop (issue 34, adversary round 19, part A).

``harness run`` waits for its stop in two tasks of its own: the CLI's wait for a second signal
(``harness.cli._progress.drive``) and the local executor's wait for ``request_stop``
(``Runner._run``). An async tool can reach both through ``asyncio.all_tasks()``. Cancelling
the first ended the run ``interrupted``, exit 130, ``stopped waiting for the executor (a second
signal)`` with no signal sent and every cell lost; cancelling the second cancelled every
running cell's worker, each cell stored as an error ``its code cancelled its task`` (the
innocent ones too). A wait ended without its stop is waited again. The real CLI in this
process (click's runner), the mock provider."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.suite_files import invoke_in

PLUGIN = """\
import asyncio

import harness


@harness.tool
async def cancel_a_stop_wait(x: str) -> str:
    \"\"\"Cancels the x-th task of the loop waiting on an asyncio.Event (0: the first made).\"\"\"
    def first(task):
        code = getattr(task.get_coro(), "cr_code", None)
        return code.co_qualname if code is not None else ""

    waits = [t for t in asyncio.all_tasks() if first(t) == "Event.wait"]
    waits.sort(key=lambda t: int(t.get_name().rpartition("-")[2]))
    waits[int(x)].cancel()
    await asyncio.sleep(0.05)
    return "ok"
"""


def _suite(which: int) -> str:
    call = f"{{tool_calls: [{{name: cancel_a_stop_wait, arguments: {{x: '{which}'}}}}]}}"
    done = "{kind: contains, value: done}"
    plain = f"expect: {done}, mock: {{latency_s: 0.2, turns: [{{text: done}}]}}"
    return (
        "suite: s\ntasks:\n"
        f"  - {{id: a, prompt: hi, tools: ['plug19s:cancel_a_stop_wait'], expect: {done}, "
        f"mock: {{turns: [{call}, {{text: done}}]}}}}\n"
        f"  - {{id: b, prompt: hi, {plain}}}\n"
        f"  - {{id: c, prompt: hi, {plain}}}\n"
    )


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("which", "concurrency"), [(0, 1), (0, 3), (1, 1), (1, 3)])
def test_a_cell_cancelling_a_wait_for_the_stop_stops_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, which: int, concurrency: int
) -> None:
    # which=0: the CLI's wait for a second signal; which=1: the runner's wait for the stop.
    args = ["run", "s.yaml", "--modes", "react", "--providers", "mock", "--db", "h.duckdb",
            "--no-progress", "--concurrency", str(concurrency)]  # fmt: skip
    done = invoke_in(tmp_path, monkeypatch, {"plug19s.py": PLUGIN, "s.yaml": _suite(which)}, args)
    assert "Traceback" not in done.output, done.output
    assert "a second signal" not in done.output, done.output  # exit 130, 0/3 cells before
    assert done.exit_code == 0, done.output
    assert "3/3 cells, 3 passed" in done.output, done.output
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT task_id, status FROM results ORDER BY 1").fetchall()
        runs = con.execute("SELECT status FROM bench_runs").fetchall()
    assert rows == [("a", "passed"), ("b", "passed"), ("c", "passed")]  # b, c errors before
    assert runs == [("finished",)]
