"""An executor plug-in handing cells in after its ``run`` returned (issue 34, adversary round
20, part A).

``harness run`` counts its summary from what the sink stored once the executor's ``run`` has
returned. A plug-in's thread handing the cells in after that stored their rows (``passed``) as
the run closed, while the summary said ``never handed in its result (not stored)``, 2 errored,
exit 3. Now the sink takes no outcome once the summary is counted (a warning names each), so the
store holds what the summary says. The real CLI in this process (click's runner)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.suite_files import invoke_in

EXECUTOR = """\
import logging
import threading

from harness.bench._runner import Runner

DONE = threading.Event()


class _Counted(logging.Handler):
    def __init__(self, event):
        super().__init__()
        self.event = event

    def emit(self, record):
        if "the summary counts what was stored" in record.getMessage():
            self.event.set()


class Late:
    def __init__(self, options, sink, context):
        self.kept = []
        self.inner = Runner(options, self.kept.append)
        self.sink = sink

    def request_stop(self):
        self.inner.request_stop()

    async def run(self, cells, on_outcome=None):
        summary = await self.inner.run(cells)
        counted = threading.Event()
        logging.getLogger("harness.bench").addHandler(_Counted(counted))

        def later():
            counted.wait(30)  # the run's summary is counted: then the cells come
            for outcome in self.kept:
                self.sink(outcome)
            DONE.set()

        threading.Thread(target=later).start()
        return summary


def factory(options, sink, context):
    return Late(options, sink, context)
"""
SUITE = (
    "suite: s\ntasks:\n"
    "  - {id: a, prompt: hi, expect: {kind: contains, value: d}, mock: {turns: [{text: d}]}}\n"
    "  - {id: b, prompt: hi, expect: {kind: contains, value: d}, mock: {turns: [{text: d}]}}\n"
)


@pytest.mark.timeout(120)
def test_cells_handed_in_after_the_summary_are_not_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ["run", "s.yaml", "--providers", "mock", "--modes", "react", "--db", "h.duckdb",
            "--no-progress", "--executor", "late20:factory"]  # fmt: skip
    done = invoke_in(tmp_path, monkeypatch, {"late20.py": EXECUTOR, "s.yaml": SUITE}, args)
    import late20  # type: ignore[import-not-found]

    assert late20.DONE.wait(30)
    assert done.exit_code == 3, done.output
    assert "never handed in its result" in done.output, done.output
    assert "after its run ended; not stored" in done.output, done.output
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT task_id, status FROM results ORDER BY 1").fetchall()
    assert rows == []  # [("a", "passed"), ("b", "passed")] on 218441d: not what the run said


HALF = """\
from harness.bench import MatrixSummary
from harness.bench._runner import Runner


class Half:
    def __init__(self, options, sink, context):
        self.inner = Runner(options, sink)

    def request_stop(self):
        self.inner.request_stop()

    async def run(self, cells, on_outcome=None):
        done = await self.inner.run(cells[:1])
        return MatrixSummary(total=len(cells), done=done.done, passed=done.passed, skipped=1)


def factory(options, sink, context):
    return Half(options, sink, context)
"""


@pytest.mark.timeout(120)
def test_cells_an_executor_skipped_without_an_interruption_are_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ray's summary says "skipped" for every cell it did not hand in: a batch whose worker
    # stopped (a cell's KeyboardInterrupt) lost its cells, "0/2 cells", exit 0, `finished`.
    args = ["run", "s.yaml", "--providers", "mock", "--modes", "react", "--db", "h.duckdb",
            "--no-progress", "--executor", "half20:factory"]  # fmt: skip
    done = invoke_in(tmp_path, monkeypatch, {"half20.py": HALF, "s.yaml": SUITE}, args)
    assert done.exit_code == 3, done.output  # 0 on 218441d: "1/2 cells, 1 passed"
    assert "s/b/react/mock/e0: the executor 'half20:factory' never handed in" in done.output
