"""A cell's code cancelling its worker while the worker waits for a provider slot (issue 34,
adversary round 19, part A).

Round 18 made a cell's cancel of its worker the cell's error, or, between cells, undone; but a
worker also waits outside any cell, for its next cell's provider slot (``--provider-concurrency``;
a Ray worker's shared limit). A cancel landing there lost that cell: popped from the queue,
never run nor stored, ``3/4 cells, 3 passed, 0 errored``, exit 0, the run ``finished``. The
cell now goes back to the queue. The real CLI in this process (click's runner), the mock."""

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
async def cancel_my_worker_after(x: str) -> str:
    \"\"\"Cancels the task awaiting it x seconds later.\"\"\"
    worker = awaiting(asyncio.current_task())
    asyncio.get_running_loop().call_later(float(x), worker.cancel)
    return "ok"
"""


def _suite(delay: float) -> str:
    call = f"{{tool_calls: [{{name: cancel_my_worker_after, arguments: {{x: '{delay}'}}}}]}}"
    done = "{kind: contains, value: done}"
    return (
        "suite: s\ntasks:\n"
        f"  - {{id: a, prompt: hi, tools: ['plug19w:cancel_my_worker_after'], expect: {done}, "
        f"mock: {{turns: [{call}, {{text: done}}]}}}}\n"
        # b holds the one provider slot while a's worker waits for it (for c)
        f"  - {{id: b, prompt: hi, expect: {done}, "
        "mock: {latency_s: 0.8, turns: [{text: done}]}}\n"
        f"  - {{id: c, prompt: hi, expect: {done}, mock: {{turns: [{{text: done}}]}}}}\n"
        f"  - {{id: d, prompt: hi, expect: {done}, mock: {{turns: [{{text: done}}]}}}}\n"
    )


@pytest.mark.timeout(120)
@pytest.mark.parametrize("delay", [0.1, 0.3])
def test_a_cancel_while_waiting_for_a_slot_loses_no_cell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, delay: float
) -> None:
    args = ["run", "s.yaml", "--modes", "react", "--providers", "mock", "--db", "h.duckdb",
            "--no-progress", "--concurrency", "2", "--provider-concurrency", "1"]  # fmt: skip
    files = {"plug19w.py": PLUGIN, "s.yaml": _suite(delay)}
    done = invoke_in(tmp_path, monkeypatch, files, args)
    assert "Traceback" not in done.output, done.output
    assert "4/4 cells, 4 passed" in done.output, done.output  # "3/4 cells, 3 passed", exit 0
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT task_id, status FROM results ORDER BY 1").fetchall()
    assert rows == [("a", "passed"), ("b", "passed"), ("c", "passed"), ("d", "passed")]
