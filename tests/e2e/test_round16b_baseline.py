"""A fault found by adversary round 16, part B (issue 34): ``harness baseline save`` of a run
that had not ended wrote the cells stored so far (34 of 40, saved while the run went on) as if
they were the run, without a word; the gate then left the rest ungated. Fails on 119c2ef."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.e2e.edited_store import said


def _slow_suite(folder: Path) -> Path:
    suite = folder / "s.yaml"
    tasks = "".join(
        f"  - id: t{i}\n    prompt: p\n    tools: []\n    expect: {{kind: contains, value: ok}}\n"
        "    mock: {turns: [{text: ok}], latency_s: 0.5}\n"
        for i in range(60)
    )
    suite.write_text(f"suite: s\ntasks:\n{tasks}", encoding="utf-8")
    return suite


def test_a_baseline_of_a_run_still_running_is_refused_and_of_an_interrupted_one_warned(
    tmp_path: Path,
) -> None:
    db = tmp_path / "h.duckdb"
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "run", str(_slow_suite(tmp_path)), "--providers",
         "mock", "--modes", "react", "--db", str(db), "--no-progress", "--label", "L"],
        env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not list((tmp_path / "runs").glob("2*/results-*.parquet")):
            assert time.monotonic() < deadline, "no shard written within 60 s"
            assert proc.poll() is None, "the run ended before any check"
            time.sleep(0.1)
        out = tmp_path / "b.json"
        running = said(["baseline", "save", "--db", str(db), "-o", str(out)], 2)
        assert "is still running (process" in running
        assert "save it once the run has ended" in running
        assert not out.exists()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    killed = said(["baseline", "save", "--db", str(db), "-o", str(out)], 0)
    assert "warning: run " in killed
    assert "it was interrupted; the baseline holds the" in killed
    assert out.exists()
