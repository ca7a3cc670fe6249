"""A plug-in tool whose exception or result cannot be shown as text (adversary round 8, issue
34). Before: a tool raising an exception whose ``__str__`` raises, or returning an object whose
``str()`` raises, a dict holding one, a list holding itself or 100,000 nested lists made the
cell an error cell (``error_during_execution: RuntimeError: str``, naming neither the tool nor
what failed), unlike a tool raising ``RuntimeError``, whose failure the model is told. Now each
is the call's error result (``error: tool crashed: its result cannot be shown as text:
ValueError: Circular reference detected``), the model goes on and the cell is graded. The real
CLI runs in this process (click's runner) on the in-process mock provider."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from harness.cli import main

TOOLS = '''\
import harness


class Unreadable(Exception):
    def __str__(self):
        raise RuntimeError("no message")


class BadStr:
    def __str__(self):
        raise RuntimeError("str")

    __repr__ = __str__


@harness.tool
def unreadable_exc() -> str:
    """Raise an exception whose message cannot be read."""
    raise Unreadable()


@harness.tool
def bad_str() -> str:
    """Return an object whose str raises."""
    return BadStr()


@harness.tool
def bad_in_dict() -> str:
    """Return a dict holding an object whose str raises."""
    return {"x": BadStr()}


@harness.tool
def deep() -> str:
    """Return 100,000 nested lists."""
    value = []
    for _ in range(100_000):
        value = [value]
    return value


@harness.tool
def cycle() -> str:
    """Return a list holding itself."""
    value = []
    value.append(value)
    return value
'''

NAMES = ["unreadable_exc", "bad_str", "bad_in_dict", "deep", "cycle"]


def _suite() -> str:
    text = "suite: evil\ntools_module: evil.py\ntasks:\n"
    for name in NAMES:
        text += (
            f"  - id: {name}\n    prompt: call {name}\n    tools: [{name}, finish]\n"
            "    expect: {kind: tool_calls, value: [" + name + "]}\n"
            "    mock: {turns: [{tool_calls: [{name: "
            + name
            + ", arguments: {}}]}, {text: done}]}\n"
        )
    return text


@pytest.mark.timeout(600)  # the first CLI run in a process imports for a minute at load 20
def test_a_tool_whose_failure_cannot_be_shown_gives_an_error_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "evil.py").write_text(TOOLS)
    (tmp_path / "evil.yaml").write_text(_suite())
    monkeypatch.chdir(tmp_path)
    args = ["run", "evil.yaml", "--modes", "react", "--providers", "mock", "--db", "h.duckdb",
            "--no-progress"]  # fmt: skip
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 0, done.output
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT task_id, status, error FROM results ORDER BY task_id").fetchall()
    assert rows == [(name, "passed", None) for name in sorted(NAMES)]
