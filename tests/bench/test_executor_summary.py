"""The run's own summary counts what the run stored, not what its executor returns (adversary
round 5, issue 34 item 16): an executor plug-in that hands a cell to the sink twice stored
duplicate rows; one that returns a made-up summary made ``harness run`` print "0/4 cells,
4 passed" and exit 0."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from tests import suite_files

#: Spawns processes, sandboxes, browsers, clusters or servers (the fast loop skips it).
pytestmark = pytest.mark.slow

PLUGIN = """\
from harness.bench._outcome import MatrixSummary
from harness.bench._runner import Runner


class Twice:
    \"\"\"Runs every cell, hands each to the sink twice, and says so in its summary.\"\"\"

    def __init__(self, options, sink):
        self._inner = Runner(options, lambda o: (sink(o), sink(o)))

    def request_stop(self):
        self._inner.request_stop()

    async def run(self, cells, on_outcome=None):
        summary = await self._inner.run(cells, on_outcome)
        summary.done *= 2
        return summary


class Liar:
    \"\"\"Runs nothing and says every cell passed.\"\"\"

    def __init__(self, options, sink):
        pass

    def request_stop(self):
        pass

    async def run(self, cells, on_outcome=None):
        return MatrixSummary(total=len(cells), done=0, passed=len(cells))


def twice(options, sink, context):
    return Twice(options, sink)


def liar(options, sink, context):
    return Liar(options, sink)
"""


def _run(tmp_path: Path, executor: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "execplug.py").write_text(PLUGIN)
    suite = suite_files.latency_suite(tmp_path, 4, 0.0)
    env = {**os.environ, "COLUMNS": "300",
           "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}  # fmt: skip
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", str(suite), "--providers", "mock",
         "--modes", "react", "--no-progress", "--db", "h.duckdb", "--trace-file", "t.jsonl",
         "--executor", f"execplug:{executor}"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def _rows(db: Path) -> list[tuple[str, int]]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(
            "SELECT cell_key, count(*) FROM results GROUP BY 1 ORDER BY 1"
        ).fetchall()


@pytest.mark.timeout(600)
def test_a_cell_handed_in_twice_is_stored_once(tmp_path: Path) -> None:
    done = _run(tmp_path, "twice")
    assert done.returncode == 0, done.stderr
    rows = _rows(tmp_path / "h.duckdb")
    assert len(rows) == 4
    assert all(n == 1 for _, n in rows), rows
    assert "4/4 cells, 4 passed" in done.stderr
    assert "again; not stored" in done.stderr


@pytest.mark.timeout(600)
def test_a_made_up_summary_is_not_believed(tmp_path: Path) -> None:
    done = _run(tmp_path, "liar")
    assert done.returncode == 3, done.stderr
    said = " ".join(done.stderr.split())
    assert "0/4 cells, 0 passed" in said
    assert "4 errored" in said
    assert "never handed in its result" in said
