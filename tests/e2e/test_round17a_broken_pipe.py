"""``harness run ... 2>&1 | head`` (issue 34, adversary round 17, part A): once the reader was
gone, rich's console raised ``SystemExit(1)`` in whatever printed next. In the progress bar,
inside the executor, a run whose cells had all finished and been stored was stored ``failed``
(``the executor 'local' raised SystemExit: 1``), exit 3; with ``--no-progress`` the summary
made the exit code 1. Now the console goes quiet and the run ends as it would have (3 here:
half the cells error)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest


@pytest.mark.slow
@pytest.mark.timeout(200)
@pytest.mark.parametrize("progress", [True, False], ids=["progress", "no-progress"])
def test_a_reader_gone_does_not_fail_the_run(tmp_path: Path, progress: bool) -> None:
    tasks = "".join(
        f"  - {{id: t{i}, prompt: hi, expect: {{kind: contains, value: hi}}, "
        + (
            "mock: {turns: [{text: hi}]}}\n"
            if i % 2
            else "mock: {turns: [{error: {status: 500, message: boom}}]}}\n"
        )
        for i in range(600)
    )
    (tmp_path / "s.yaml").write_text(f"suite: s\ntasks:\n{tasks}")
    args = [sys.executable, "-m", "harness.cli", "run", "s.yaml", "--providers", "mock",
            "--modes", "react", "--db", "h.duckdb"]  # fmt: skip
    args += [] if progress else ["--no-progress"]
    read, write = os.pipe()
    proc = subprocess.Popen(args, cwd=tmp_path, stdout=write, stderr=write)
    os.close(write)
    os.read(read, 100)  # `| head -c 100`: the reader takes a little, then goes
    os.close(read)
    assert proc.wait(timeout=180) == 3  # 1 before without the progress bar (cells errored: 3)
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        assert con.execute("SELECT status, error FROM bench_runs").fetchall() == [
            ("finished", None)
        ]
        assert con.execute("SELECT count(*) FROM results").fetchall() == [(600,)]
