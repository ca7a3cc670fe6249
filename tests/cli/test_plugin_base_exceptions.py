"""Plug-ins that raise what is not an ``Exception`` (adversary round 7, issue 34): a mode whose
module, constructor, ``init`` or ``iterate`` raises ``SystemExit(0)``, ``KeyboardInterrupt``,
``GeneratorExit``, a ``BaseException`` subclass of its own, or an exception whose ``__str__``
raises. Before: a traceback and exit 1 (a ``BaseException`` subclass or ``GeneratorExit`` at
import or in the constructor), click's ``Aborted!`` and exit 1 (``KeyboardInterrupt``), exit 0
with nothing printed and nothing stored (``SystemExit(0)`` in the constructor or in
``iterate``: the run ended mid-matrix), a traceback printed before each error cell (``init``
raising, or ``iterate`` raising a ``BaseException`` subclass or an exception whose message
cannot be read). Now: before any cell, one line and exit 2; during a cell, an error cell
(exit 3, every cell stored, no traceback); ``KeyboardInterrupt`` anywhere: exit 130, as
Ctrl-C. The real CLI runs in this process (click's runner) on the in-process mock provider."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.suite_files import invoke_in

TASKS = """\
suite: s
tasks:
  - {id: a, prompt: hi, expect: {kind: contains, value: hi}, mock: {turns: [{text: hi}]}}
  - {id: b, prompt: hi, expect: {kind: contains, value: hi}, mock: {turns: [{text: hi}]}}
"""

MODE = """\
import harness


class Boom(BaseException):
    pass


class Unreadable(Exception):
    def __str__(self):
        raise RuntimeError("no message")


def _raise():
    raise {exc}


if {where!r} == "import":
    _raise()


class M:
    name = "m"

    def __init__(self):
        if {where!r} == "ctor":
            _raise()

    def init(self, state):
        if {where!r} == "init":
            _raise()

    async def iterate(self, state):
        if {where!r} == "iterate":
            _raise()
        return harness.Halt(None)
"""


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str, exc: str) -> tuple[int, str]:
    module = f"plug_{where}_{abs(hash(exc))}"
    files = {f"{module}.py": MODE.format(where=where, exc=exc), "s.yaml": TASKS}
    args = ["run", "s.yaml", "--modes", f"{module}:M", "--providers", "mock", "--db", "h.duckdb",
            "--no-progress"]  # fmt: skip
    done = invoke_in(tmp_path, monkeypatch, files, args)
    return done.exit_code, done.output


def _stored(tmp_path: Path) -> list[tuple[str, str]]:
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        return con.execute("SELECT task_id, status FROM results ORDER BY task_id").fetchall()


BEFORE_ANY_CELL = {
    "import-GeneratorExit": ("import", "GeneratorExit()", "GeneratorExit"),
    "import-own-BaseException": ("import", "Boom('x')", "Boom: x"),
    "import-unreadable-message": ("import", "Unreadable()", "Unreadable"),
    "ctor-SystemExit-0": ("ctor", "SystemExit(0)", "SystemExit"),
    "ctor-own-BaseException": ("ctor", "Boom('x')", "Boom: x"),
    "ctor-GeneratorExit": ("ctor", "GeneratorExit()", "GeneratorExit"),
}


@pytest.mark.timeout(600)  # the first CLI run in a process imports for a minute at load 20
@pytest.mark.parametrize("case", sorted(BEFORE_ANY_CELL))
def test_a_mode_raising_before_any_cell_is_one_line_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    where, exc, said = BEFORE_ANY_CELL[case]
    code, out = _run(tmp_path, monkeypatch, where, exc)
    assert code == 2, out
    assert "Traceback" not in out
    assert said in " ".join(out.split())


DURING_A_CELL = {
    "iterate-SystemExit-0": ("iterate", "SystemExit(0)", "SystemExit"),
    "iterate-own-BaseException": ("iterate", "Boom('x')", "Boom: x"),
    "iterate-unreadable-message": ("iterate", "Unreadable()", "Unreadable"),
    "init-RuntimeError": ("init", "RuntimeError('x')", "init raised RuntimeError: x"),
    "init-SystemExit-3": ("init", "SystemExit(3)", "SystemExit: 3"),
    # round 12: these ended the executor and every cell after them (a traceback's worth of
    # "the executor 'local' raised GeneratorExit"); now each is the mode's error
    "iterate-GeneratorExit": ("iterate", "GeneratorExit('x')", "GeneratorExit: x"),
    "init-GeneratorExit": ("init", "GeneratorExit('x')", "init raised GeneratorExit: x"),
}


@pytest.mark.timeout(600)
@pytest.mark.parametrize("case", sorted(DURING_A_CELL))
def test_a_mode_raising_during_a_cell_makes_error_cells_and_stores_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    where, exc, said = DURING_A_CELL[case]
    code, out = _run(tmp_path, monkeypatch, where, exc)
    assert code == 3, out
    assert "Traceback" not in out
    assert "2/2 cells" in out, out
    assert "2 errored" in out, out
    assert said in " ".join(out.split()), out
    assert "internal error" not in out  # the plug-in's failure, not the harness's
    assert _stored(tmp_path) == [("a", "error"), ("b", "error")]


@pytest.mark.timeout(600)
@pytest.mark.parametrize("where", ["import", "ctor", "iterate"])
def test_a_mode_raising_keyboard_interrupt_is_an_interrupt_exit_130(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    code, out = _run(tmp_path, monkeypatch, where, "KeyboardInterrupt()")
    assert code == 130, out
    assert "Aborted!" not in out
    assert "Traceback" not in out
    assert "interrupted" in out
    if where == "iterate":  # the run is closed as interrupted, nothing stored for its cells
        assert _stored(tmp_path) == []


TOOLS_AND_GRADERS = """\
from typing import Literal

import harness
from harness.grading import Grader


class Boom(BaseException):
    pass


@harness.tool
def interrupting(x: str) -> str:
    \"\"\"A tool.\"\"\"
    raise KeyboardInterrupt


@harness.tool
def booming(x: str) -> str:
    \"\"\"A tool.\"\"\"
    raise Boom("tool")


@harness.tool
def exiting(x: str) -> str:
    \"\"\"A tool.\"\"\"
    raise GeneratorExit("tool")


@harness.tool
async def async_exiting(x: str) -> str:
    \"\"\"A tool.\"\"\"
    raise GeneratorExit("tool")


class G(Grader):
    kind: Literal["booming"] = "booming"

    async def evaluate(self, result, context):
        raise Boom("grader")
"""


def _suite(tool: str | None, grader: str) -> str:
    turns = "[{text: hi}]"
    tools = "[]"
    if tool:
        tools = f"['plug_tg:{tool}']"
        turns = f"[{{tool_calls: [{{name: {tool}, arguments: {{x: y}}}}]}}, {{text: hi}}]"
    return (
        "suite: s\ntasks:\n"
        f"  - {{id: a, prompt: hi, tools: {tools}, expect: {grader}, mock: {{turns: {turns}}}}}\n"
        "  - {id: b, prompt: hi, expect: {kind: contains, value: hi},"
        " mock: {turns: [{text: hi}]}}\n"
    )


@pytest.mark.timeout(600)
@pytest.mark.parametrize("case", ["tool-KeyboardInterrupt", "tool-own-BaseException",
                                  "grader-own-BaseException", "tool-GeneratorExit",
                                  "async-tool-GeneratorExit"])  # fmt: skip
def test_a_tool_or_grader_raising_what_is_not_an_exception(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    """Before: `Aborted!` and exit 1 (a tool's KeyboardInterrupt), a traceback and the cause
    `internal error: Boom: tool` (a tool's own BaseException), a traceback and exit 1 (a
    grader's)."""
    contains = "{kind: contains, value: hi}"
    suite = {
        "tool-KeyboardInterrupt": _suite("interrupting", contains),
        "tool-own-BaseException": _suite("booming", contains),
        "grader-own-BaseException": _suite(None, "{kind: 'plug_tg:G'}"),
        "tool-GeneratorExit": _suite("exiting", contains),
        "async-tool-GeneratorExit": _suite("async_exiting", contains),
    }[case]
    args = ["run", "s.yaml", "--modes", "react", "--providers", "mock", "--db", "h.duckdb",
            "--no-progress", "--concurrency", "1"]  # fmt: skip
    done = invoke_in(
        tmp_path, monkeypatch, {"plug_tg.py": TOOLS_AND_GRADERS, "s.yaml": suite}, args
    )
    out = done.output
    assert "Traceback" not in out
    assert "internal error" not in out
    if case == "tool-KeyboardInterrupt":  # a stops the run as Ctrl-C: b never starts
        assert done.exit_code == 130, out
        assert "interrupted" in out
        assert _stored(tmp_path) == []
    else:
        assert done.exit_code == 3, out
        assert ("GeneratorExit: tool" if "GeneratorExit" in case else "Boom: ") in out
        assert _stored(tmp_path) == [("a", "error"), ("b", "passed")]
