"""``harness run`` with its standard error closed (issue 34, adversary round 18, part A).

Started with file descriptor 2 closed (``2>&-``, a service manager's bare process), Python's
``sys.stderr`` is None; the console's stream wrote to it and the summary raised
``AttributeError``: a run whose every cell was stored and whose row was ``finished`` ended with
exit 1 (an unprintable traceback). Now the console is quiet and the command keeps its code."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

SUITE = (
    "suite: s\ntasks:\n"
    "  - {id: a, prompt: hi, expect: {kind: contains, value: hi}, mock: {turns: [{text: hi}]}}\n"
    "  - {id: b, prompt: hi, expect: {kind: contains, value: nope}, mock: {turns: [{error: "
    "{status: 400, message: bad}}]}}\n"
)


def _without_stderr() -> None:
    os.close(2)


@pytest.mark.timeout(120)
def test_a_run_with_its_standard_error_closed_keeps_its_exit_code(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(SUITE)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "HARNESS_LIVE_PREFLIGHT": "0"}
    proc = subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", "s.yaml", "--providers", "mock",
         "--modes", "react", "--db", "h.duckdb", "--no-progress"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, preexec_fn=_without_stderr,
        timeout=100, check=False,
    )  # fmt: skip
    assert proc.returncode == 3, proc.stdout  # 1 before: the summary's AttributeError
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        assert con.execute("SELECT status FROM bench_runs").fetchall() == [("finished",)]
        rows = con.execute("SELECT task_id, status FROM results ORDER BY 1").fetchall()
    assert rows == [("a", "passed"), ("b", "error")]
