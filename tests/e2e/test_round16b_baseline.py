"""A fault found by adversary round 16, part B (issue 34): ``harness baseline save`` of a run
that had not ended wrote the cells stored so far (34 of 40, saved while the run went on) as if
they were the run, without a word; the gate then left the rest ungated. Fails on 119c2ef."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
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


@contextlib.contextmanager
def slow_run(folder: Path, *extra: str) -> Iterator[subprocess.Popen[bytes]]:
    """``harness run`` of the slow suite into ``folder/h.duckdb`` as a process, under way (its
    first shard written); killed at the end if it still runs."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "run", str(_slow_suite(folder)), "--providers",
         "mock", "--modes", "react", "--db", str(folder / "h.duckdb"), "--no-progress", *extra],
        env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not list((folder / "runs").glob("2*/results-*.parquet")):
            assert time.monotonic() < deadline, "no shard written within 60 s"
            assert proc.poll() is None, "the run ended before any check"
            time.sleep(0.1)
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)


def test_a_baseline_of_a_run_still_running_is_refused_and_of_an_interrupted_one_warned(
    tmp_path: Path,
) -> None:
    db = tmp_path / "h.duckdb"
    with slow_run(tmp_path, "--label", "L"):
        out = tmp_path / "b.json"
        running = said(["baseline", "save", "--db", str(db), "-o", str(out)], 2)
        assert "is still running (process" in running
        assert "save it once the run has ended" in running
        assert not out.exists()
    killed = said(["baseline", "save", "--db", str(db), "-o", str(out)], 0)
    assert "warning: run " in killed
    assert "it was interrupted; the baseline holds the" in killed
    assert out.exists()
