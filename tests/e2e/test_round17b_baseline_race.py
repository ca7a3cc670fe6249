"""A fault found by adversary round 17, part B (issue 34), past round 16's refusal of a baseline
of a live run: ``harness baseline save`` read the run's cells first and its state after, so a
run that ended between the two reads was saved with only the cells stored before its end, as a
finished run, without a word. Here the run ends exactly there (the state's read waits for it).
Fails on 9919cbe."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness.cli import main
from tests.e2e.test_round16b_baseline import _slow_suite

_TASKS = 60

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def test_a_run_ending_while_its_baseline_is_saved_is_saved_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import harness.report._loader as loader

    db = tmp_path / "h.duckdb"
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "run", str(_slow_suite(tmp_path)), "--providers",
         "mock", "--modes", "react", "--db", str(db), "--no-progress", "--concurrency", "8"],
        env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    real = loader.unfinished

    def after_the_end(*args: Any) -> Any:
        assert proc.wait(timeout=120) == 0
        return real(*args)

    monkeypatch.setattr(loader, "unfinished", after_the_end)
    try:
        deadline = time.monotonic() + 60
        while not list((tmp_path / "runs").glob("2*/results-*.parquet")):
            assert time.monotonic() < deadline, "no shard written within 60 s"
            assert proc.poll() is None, "the run ended before any check"
            time.sleep(0.1)
        out = tmp_path / "b.json"
        done = CliRunner().invoke(main, ["baseline", "save", "--db", str(db), "-o", str(out)])
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
    assert done.exit_code == 0, done.output
    assert len(json.loads(out.read_text(encoding="utf-8"))["cells"]) == _TASKS, done.output
