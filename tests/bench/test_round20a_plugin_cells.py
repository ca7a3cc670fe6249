"""Plug-in code a cell runs outside the kernel (issue 34, adversary round 20, part A).

A task source's ``Task`` whose ``run_options`` raised ``GeneratorExit`` in a cell (a
``ValueError`` there is that cell's error) ended the local executor: ``the executor 'local'
raised GeneratorExit``, the run ``failed`` and every later cell unrun. A plug-in grader whose
``walk`` raised once the run was under way did the same (the runner asked it outside the cell's
guard), and at the run's start or in ``suites validate`` (a grader's ``parts()`` raising,
answering what is not a grader) ended the command in a traceback, exit 1. The real CLI in this
process (click's runner), the mock provider."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.suite_files import invoke_in

SOURCE = """\
from typing import Literal

from harness.grading import Grade, Grader
from harness.suites import Suite, Task

CALLS = {}


class Hostile(Task):
    def run_options(self):
        CALLS[self.id] = CALLS.get(self.id, 0) + 1
        if self.id == "b" and CALLS[self.id] > 1:  # the load's own call passes
            raise GeneratorExit("boom")
        return super().run_options()


class Walker(Grader):
    kind: Literal["walker20"] = "walker20"

    def walk(self):
        CALLS["walk"] = CALLS.get("walk", 0) + 1
        if CALLS["walk"] > 8:  # the run's start passes; its cells do not
            raise ValueError("walk boom")
        yield self

    async def evaluate(self, result, context):
        return Grade(True, 1.0, "ok")


class Parts(Grader):
    kind: Literal["plug20c.src:Parts"] = "plug20c.src:Parts"

    def parts(self):
        raise ValueError("parts boom")

    async def evaluate(self, result, context):
        return Grade(True, 1.0, "ok")


def tasks(kind, expect):
    CALLS.clear()
    return [kind(id=i, prompt="hi", expect=expect, mock={"turns": [{"text": "done"}]})
            for i in ("a", "b", "c", "d")]


def hostile(argument, options):
    return Suite(suite="s", tasks=tasks(Hostile, {"kind": "contains", "value": "done"}))


def walking(argument, options):
    return Suite(suite="s", tasks=tasks(Task, Walker()))
"""

PARTS = (
    "suite: s\ntasks:\n"
    "  - {id: a, prompt: hi, expect: {kind: 'plug20c.src:Parts'}, mock: {turns: [{text: d}]}}\n"
)


def _files(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "plug20c").mkdir()
    return {"plug20c/__init__.py": "", "plug20c/src.py": SOURCE, "p.yaml": PARTS}


def _rows(tmp_path: Path) -> list[tuple[str, str, str | None]]:
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        return con.execute("SELECT task_id, status, error FROM results ORDER BY 1").fetchall()


RUN = ["--providers", "mock", "--modes", "react", "--db", "h.duckdb", "--no-progress",
       "--concurrency", "1"]  # fmt: skip


@pytest.mark.timeout(120)
def test_a_task_raising_generator_exit_is_its_cells_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    done = invoke_in(
        tmp_path, monkeypatch, _files(tmp_path), ["run", "plug20c.src:hostile:x", *RUN]
    )
    assert "raised GeneratorExit" not in done.output.replace("b/react/mock/e0: Gen", ""), (
        done.output
    )
    assert "4/4 cells, 3 passed" in done.output, done.output  # 1/4 cells on 218441d
    assert done.exit_code == 3, done.output
    rows = _rows(tmp_path)
    assert [r[:2] for r in rows] == [("a", "passed"), ("b", "error"), ("c", "passed"),
                                     ("d", "passed")]  # fmt: skip
    assert rows[1][2] == "GeneratorExit: boom"


@pytest.mark.timeout(120)
def test_a_grader_whose_walk_raises_in_a_cell_is_its_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    done = invoke_in(
        tmp_path, monkeypatch, _files(tmp_path), ["run", "plug20c.src:walking:x", *RUN]
    )
    assert "Traceback" not in done.output, done.output
    assert "the executor 'local' raised" not in done.output, done.output
    assert "4/4 cells" in done.output, done.output
    assert done.exit_code == 3, done.output
    assert {r[1] for r in _rows(tmp_path)} == {"error"}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_grader_whose_parts_raise_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    args = ["suites", "validate", "p.yaml"] if command == "validate" else ["run", "p.yaml", *RUN]
    done = invoke_in(tmp_path, monkeypatch, _files(tmp_path), args)
    assert done.exception is None or isinstance(done.exception, SystemExit), done.exception
    assert done.exit_code == 2, done.output  # a traceback, exit 1, on 218441d
    assert "grader 'plug20c.src:Parts': its parts() raised ValueError: parts boom" in done.output
