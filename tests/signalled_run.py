"""``harness run`` as a process, signalled once its executor plug-in or a tool says it is under
way: the common part of the tests that stop a run at a chosen moment."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path


def started_run(folder: Path, *extra: str) -> subprocess.Popen[str]:
    """``harness run s.yaml`` (the mock provider, ``react``, ``h.duckdb``, ``extra``) as a process
    in ``folder``, which it imports plug-ins from; its output and errors in one text pipe."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), *sys.path])}
    return subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "run", "s.yaml", "--providers", "mock",
         "--modes", "react", "--db", "h.duckdb", "--no-progress", *extra],
        cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip


def run_and_signal(
    tmp_path: Path,
    executor: str | None,
    *,
    ready: str,
    signum: signal.Signals = signal.SIGINT,
    times: int = 2,
    before_s: float = 0.0,
    between_s: float = 1.0,
    extra: Sequence[str] = (),
) -> tuple[int, str]:
    """Run ``s.yaml`` in ``tmp_path`` on the mock provider with ``--executor executor`` (its
    module in ``tmp_path``; None: the default) and ``extra`` arguments, wait for a line holding
    ``ready`` (printed by the executor or a tool), then send ``signum`` ``times`` times:
    ``before_s`` before the first, ``between_s`` after each. Returns the exit code and the
    output after ``ready``; the process is killed if it outlives 120 s after the signals."""
    proc = started_run(tmp_path, "--label", "L", *(["--executor", executor] if executor else []),
                       *extra)  # fmt: skip
    assert proc.stdout is not None
    try:
        for line in proc.stdout:  # the run is under way once the executor says so
            if ready in line:
                break
        time.sleep(before_s)
        for _ in range(times):
            proc.send_signal(signum)
            time.sleep(between_s)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, out
