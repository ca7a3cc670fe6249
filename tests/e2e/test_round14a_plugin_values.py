"""What a plug-in tool hands back that the harness cannot store or show (issue 34, adversary
round 14, part A): a ``Submit`` whose deliverable is a cycle, lists nested 5,000 deep or an
object whose ``str`` raises made no row (``the outcome of s/a/react/mock/e0 makes no row``):
the cell was not stored, the summary said the executor "never handed in its result", and the
run's tracing printed a traceback (``to_json`` let the ``RecursionError`` through). Now the
row holds a text saying why the deliverable cannot be stored, and the span its ``repr`` or
type. The real CLI in this process (click's runner), the mock provider."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.suite_files import invoke_in

PLUGIN = """\
import harness
from harness import Submit


def _deep(n):
    v = [1]
    for _ in range(n):
        v = [v]
    return v


_cycle = []
_cycle.append(_cycle)


class Unreadable:
    def __str__(self):
        raise RuntimeError("no str")

    def __repr__(self):
        raise RuntimeError("no repr")


VALUES = {"deep": lambda: _deep(5000), "cycle": lambda: _cycle, "unreadable": Unreadable}


@harness.tool
def hand_in(which: str) -> object:
    \"\"\"Submits a value.\"\"\"
    return Submit(VALUES[which]())
"""


@pytest.mark.timeout(600)
@pytest.mark.parametrize("which", ["deep", "cycle", "unreadable"])
def test_a_deliverable_that_cannot_be_stored_keeps_its_cell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, which: str
) -> None:
    call = f"{{tool_calls: [{{name: hand_in, arguments: {{which: {which}}}}}]}}"
    suite = (
        "suite: s\ntasks:\n"
        f"  - {{id: a, prompt: hi, tools: ['plug14v:hand_in'], expect: {{kind: finish_reason, "
        f"value: submitted}}, mock: {{turns: [{call}, {{text: hi}}]}}}}\n"
        "  - {id: b, prompt: hi, expect: {kind: contains, value: hi},"
        " mock: {turns: [{text: hi}]}}\n"
    )
    args = ["run", "s.yaml", "--modes", "react", "--providers", "mock", "--db", "h.duckdb",
            "--no-progress", "--concurrency", "1"]  # fmt: skip
    done = invoke_in(tmp_path, monkeypatch, {"plug14v.py": PLUGIN, "s.yaml": suite}, args)
    out = done.output
    assert "Traceback" not in out, out  # the tracing error's traceback before
    assert "makes no row" not in out, out
    assert "2/2 cells" in out, out  # 1/2 before: the cell was not stored
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT task_id, deliverable FROM results ORDER BY task_id").fetchall()
    assert [r[0] for r in rows] == ["a", "b"]
    assert "cannot be stored as JSON" in rows[0][1]
