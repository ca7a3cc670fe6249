"""``harness run`` with an async tool or a mode whose ``GeneratorExit`` comes through a future
(adversary round 12, part C). Before: asyncio threw it into the cell's task, which closed the
cell's coroutines and ended the executor (``the executor 'local' raised GeneratorExit``, a
traceback, ``0/2 cells``: the innocent cell never ran). Now the cell is an error cell naming
it, the other cell runs. The real CLI runs in this process (click's runner, the mock provider).
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from harness.cli import main

PLUGIN = """\
import asyncio

import harness


def blocking():
    raise GeneratorExit("thread")


@harness.tool
async def via_thread(x: str) -> str:
    \"\"\"A tool.\"\"\"
    return await asyncio.to_thread(blocking)


class M:
    name = "m"

    def init(self, state):
        pass

    async def iterate(self, state):
        if "boom" in str(state.messages):
            await asyncio.to_thread(blocking)
        return harness.Halt(None)
"""

SUITE = """\
suite: s
tasks:
  - {{id: a, prompt: boom, tools: {tools}, expect: {{kind: contains, value: hi}},
     mock: {{turns: [{{tool_calls: [{{name: via_thread, arguments: {{x: y}}}}]}}, {{text: hi}}]}}}}
  - {{id: b, prompt: hi, expect: {{kind: contains, value: hi}}, mock: {{turns: [{{text: hi}}]}}}}
"""


@pytest.mark.timeout(600)  # the first CLI run in a process imports for a minute at load 20
@pytest.mark.parametrize("where", ["tool", "mode"])
def test_a_generator_exit_through_a_future_is_an_error_cell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    (tmp_path / "plug_ge12c.py").write_text(PLUGIN)
    tools = "['plug_ge12c:via_thread']" if where == "tool" else "[]"
    (tmp_path / "s.yaml").write_text(SUITE.format(tools=tools))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    mode = "react" if where == "tool" else "plug_ge12c:M"
    args = ["run", "s.yaml", "--modes", mode, "--providers", "mock", "--db", "h.duckdb",
            "--no-progress", "--concurrency", "1"]  # fmt: skip
    done = CliRunner().invoke(main, args)
    out = done.output
    assert done.exit_code == 3, out
    assert "Traceback" not in out
    assert "internal error" not in out
    assert "raised GeneratorExit" not in out  # the executor's end
    assert "2/2 cells" in out, out
    assert "error_during_execution: GeneratorExit: thread" in out
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT task_id, status FROM results ORDER BY task_id").fetchall()
    assert rows[0] == ("a", "error")
    assert rows[1][0] == "b"
    assert rows[1][1] != "error"
