"""A SIGTERM that reaches ``harness run`` after its summary (issue 34, adversary round 14, part A):
its handlers were gone and Python's teardown was still running, so the process died of the
signal (exit -15, 143 in a shell) with every cell stored: the last of a stop sequence or a
``timeout`` firing late changed the documented exit code (it made
``test_sigterm_ends_a_run_whose_executor_holds_the_event_loop`` flaky at load 4). Now the
command ignores SIGTERM and SIGHUP once everything is stored and summed up."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SUITE = """\
suite: s
tasks:
  - {id: a, prompt: hi, expect: {kind: contains, value: hi}, mock: {turns: [{text: hi}]}}
"""


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_after_the_summary_keeps_the_exit_code(
    tmp_path: Path, signum: signal.Signals
) -> None:
    (tmp_path / "s.yaml").write_text(SUITE)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "run", "s.yaml", "--providers", "mock",
         "--modes", "react", "--db", "h.duckdb", "--no-progress"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            if line.startswith("run ") and "cells" in line:  # the summary: all is stored
                break
        while proc.poll() is None:  # through the whole teardown, until the process is gone
            proc.send_signal(signum)
            time.sleep(0.02)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, out  # -15 (-1) before: killed during the teardown
