"""Executor plug-ins that hand in outcomes holding odd values (adversary round 12 part A, issue 34
item 16). Before: a ``str`` subclass whose ``encode`` raises as one cell's answer made the shard
holding it fail to flush, and every other cell's row in that shard was lost (4 cells, 0 rows, the
run left ``running``, a traceback); a drift of NaN or ``"many"`` raised ``StoreError`` out of the
sink (the run crashed); a drift of -5 was stored. Now each such outcome makes no row (a warning,
an error cell of the summary) and the other cells are stored. The real CLI in this process
(click's runner), the in-process mock provider, a real DuckDB file."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from harness.cli import main

SUITE = "suite: s\ntasks:\n" + "".join(
    f"  - {{id: t{i}, prompt: hi, expect: {{kind: contains, value: hi}}, "
    "mock: {turns: [{text: hi there}]}}\n"
    for i in range(1, 5)
)

PLUGIN = """\
import dataclasses

from harness.bench import Runner


class Poisoned(str):
    def encode(self, *args, **kwargs):
        raise RuntimeError("encode boom")

    def __len__(self):
        raise RuntimeError("len boom")


def _factory(change):
    def factory(options, sink, context):
        def hand_in(outcome):
            if outcome.cell.task.id == "t2":
                outcome = change(outcome)
            sink(outcome)

        return Runner(options, hand_in)

    return factory


def _text(outcome):
    outcome.result.text = Poisoned("hi there")
    return outcome


text = _factory(_text)
drift_nan = _factory(lambda o: dataclasses.replace(o, drift=float("nan")))
drift_word = _factory(lambda o: dataclasses.replace(o, drift="many"))
drift_negative = _factory(lambda o: dataclasses.replace(o, drift=-5))
"""


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, factory: str) -> tuple[int, str]:
    (tmp_path / "odd12a.py").write_text(PLUGIN)
    (tmp_path / "s.yaml").write_text(SUITE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    args = ["run", "s.yaml", "--modes", "react", "--providers", "mock", "--db", "h.duckdb",
            "--no-progress", "--executor", f"odd12a:{factory}", "--concurrency", "1"]  # fmt: skip
    done = CliRunner().invoke(main, args)
    assert "Traceback" not in done.output, done.output
    return done.exit_code, " ".join(done.output.split())


def _rows(tmp_path: Path) -> list[tuple[object, ...]]:
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        return con.execute("SELECT task_id, status, text FROM results ORDER BY 1").fetchall()


def _run_status(tmp_path: Path) -> str:
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        row = con.execute("SELECT status FROM bench_runs").fetchone()
    assert row is not None
    return str(row[0])


@pytest.mark.timeout(600)  # the first CLI run in a process imports for a minute at load 20
def test_an_answer_whose_methods_raise_is_stored_as_plain_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole shard was lost before (0 of 4 rows); now the str subclass is stored as the
    plain string it holds, through ``str``'s own methods."""
    code, out = _run(tmp_path, monkeypatch, "text")
    assert _rows(tmp_path) == [(f"t{i}", "passed", "hi there") for i in range(1, 5)]
    assert _run_status(tmp_path) == "finished"
    assert "4/4 cells, 4 passed" in out, out
    assert code == 0


@pytest.mark.timeout(600)
@pytest.mark.parametrize(
    ("factory", "shown"),
    [("drift_nan", "nan"), ("drift_word", "'many'"), ("drift_negative", "-5")],
)
def test_a_drift_that_is_no_count_makes_no_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, factory: str, shown: str
) -> None:
    code, out = _run(tmp_path, monkeypatch, factory)
    assert f"s/t2/react/mock/e0 whose drift is {shown}, not a count of 0 or more" in out, out
    assert [r[0] for r in _rows(tmp_path)] == ["t1", "t3", "t4"]
    assert _run_status(tmp_path) == "finished"
    assert "3/4 cells, 3 passed, 0 failed, 1 errored" in out, out
    assert code == 3
