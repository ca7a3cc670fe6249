"""Executor plug-ins that lie or raise mid-run (adversary round 7, issue 34): one that hands the
sink a string and ``None`` besides each outcome, one whose outcome's ``result`` is a string,
one whose ``run`` returns ``None``, one whose ``run`` raises (``RuntimeError``,
``SystemExit(0)``) after the first cell was stored, one
that says it was interrupted when every cell was stored. Before: a traceback and exit 1 for
the first four (for ``SystemExit(0)``: exit 0, nothing printed, the second cell lost silently),
exit 130 for the last. Now what is not an outcome is refused with a warning; a cell never
handed in is an error cell of the summary; an executor that raised closes the run ``failed``
naming the exception, the cells stored kept, exit 3. The real CLI runs in this process (click's
runner) on the in-process mock provider; rows are counted in the DuckDB file."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from harness.cli import main

SUITE = """\
suite: s
tasks:
  - {id: a, prompt: hi, expect: {kind: contains, value: hi}, mock: {turns: [{text: hi}]}}
  - {id: b, prompt: hi, expect: {kind: contains, value: hi}, mock: {turns: [{text: hi}]}}
"""

PLUGIN = """\
import dataclasses

from harness.bench import Runner


class Boom(BaseException):
    pass


def _raise(exc):
    raise exc


def garbage_sink(options, sink, context):
    return Runner(options, lambda o: (sink("not an outcome"), sink(None), sink(o)))


def garbage_result(options, sink, context):
    def hand_in(o):
        sink(dataclasses.replace(o, result="garbage") if o.cell.task.id == "a" else o)

    return Runner(options, hand_in)


def _wrapping(after):
    def factory(options, sink, context):
        inner = Runner(options, sink)

        class Wrapper:
            def request_stop(self):
                inner.request_stop()

            async def run(self, cells, on_outcome=None):
                return after(await inner.run(cells[:1], on_outcome))

        return Wrapper()

    return factory


returns_none = _wrapping(lambda summary: None)
raises_runtime = _wrapping(lambda summary: _raise(RuntimeError("lost its cluster")))
raises_own = _wrapping(lambda summary: _raise(Boom("b")))
raises_exit_0 = _wrapping(lambda summary: _raise(SystemExit(0)))


def says_interrupted(options, sink, context):
    inner = Runner(options, sink)

    class Wrapper:
        def request_stop(self):
            inner.request_stop()

        async def run(self, cells, on_outcome=None):
            summary = await inner.run(cells, on_outcome)
            summary.interrupted = True
            return summary

    return Wrapper()
"""


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, factory: str) -> tuple[int, str]:
    module = f"lying_{factory}"
    (tmp_path / f"{module}.py").write_text(PLUGIN)
    (tmp_path / "s.yaml").write_text(SUITE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    args = ["run", "s.yaml", "--modes", "react", "--providers", "mock", "--db", "h.duckdb",
            "--no-progress", "--executor", f"{module}:{factory}", "--label", "L"]  # fmt: skip
    done = CliRunner().invoke(main, args)
    return done.exit_code, done.output


def _db(tmp_path: Path, sql: str) -> list[tuple[object, ...]]:
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        return con.execute(sql).fetchall()


@pytest.mark.timeout(600)  # the first CLI run in a process imports for a minute at load 20
@pytest.mark.parametrize("factory", ["garbage_sink", "garbage_result", "returns_none"])
def test_what_is_not_an_outcome_or_a_summary_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, factory: str
) -> None:
    code, out = _run(tmp_path, monkeypatch, factory)
    assert "Traceback" not in out
    rows = _db(tmp_path, "SELECT task_id, status FROM results ORDER BY task_id")
    flat = " ".join(out.split())
    if factory == "garbage_sink":  # the string and None are refused, the outcomes stored
        assert code == 0, out
        assert rows == [("a", "passed"), ("b", "passed")]
        assert "2/2 cells, 2 passed" in flat
        assert "handed in str, not a CellOutcome" in flat
    elif factory == "garbage_result":  # a's outcome is refused: a is an error of the summary
        assert code == 3, out
        assert rows == [("b", "passed")]
        assert "whose result is str, not a Result" in flat
        assert "s/a/react/mock/e0: the executor" in flat
    else:  # ran only the first cell, then returned None: b is an error of the summary
        assert code == 3, out
        assert rows == [("a", "passed")]
        assert "returned NoneType, not a MatrixSummary" in flat
        assert "1/2 cells, 1 passed, 0 failed, 1 errored" in flat


@pytest.mark.timeout(600)
@pytest.mark.parametrize(
    ("factory", "said"),
    [
        ("raises_runtime", "RuntimeError: lost its cluster"),
        ("raises_exit_0", "SystemExit: 0"),
    ],
)
def test_an_executor_raising_mid_run_fails_the_run_and_keeps_its_cells(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, factory: str, said: str
) -> None:
    code, out = _run(tmp_path, monkeypatch, factory)
    flat = " ".join(out.split())
    assert code == 3, out
    assert "Traceback" not in out
    assert f"the executor 'lying_{factory}:{factory}' raised {said}" in flat
    assert "1/2 cells, 1 passed, 0 failed, 1 errored" in flat
    assert _db(tmp_path, "SELECT task_id, status FROM results") == [("a", "passed")]
    ((status, error),) = _db(tmp_path, "SELECT status, error FROM bench_runs")
    assert status == "failed"
    assert isinstance(error, str)
    assert said in error


@pytest.mark.timeout(600)
def test_a_run_that_stored_every_cell_is_not_interrupted_whatever_the_executor_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out = _run(tmp_path, monkeypatch, "says_interrupted")
    assert code == 0, out
    assert "interrupted" not in out
    assert _db(tmp_path, "SELECT status FROM bench_runs") == [("finished",)]
