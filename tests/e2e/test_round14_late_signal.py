"""A stop signal after ``harness run`` has printed its summary (the run stored in full, the
process exiting). Before: Python puts the default handler back for every signal with a handler
of its own as the interpreter shuts down, and a SIGTERM 0-150 ms after the summary line killed
the process 30 times in 30 (exit -15 for a finished run: CI, ``timeout`` and ``docker stop``
saw a failure). Now the run's late-signal handler is replaced by SIG_IGN at its exit, which
Python leaves in place: exit 0 in 30 of 30. A real ``harness run`` process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

SUITE = """\
suite: late
tasks:
  - {id: a, prompt: hi, expect: {kind: contains, value: hi}, mock: {turns: [{text: hi}]}}
"""


@pytest.mark.timeout(600)
@pytest.mark.parametrize("after_s", [0.0, 0.05, 0.1])
def test_a_sigterm_after_the_summary_leaves_the_exit_status(tmp_path: Path, after_s: float) -> None:
    (tmp_path / "s.yaml").write_text(SUITE)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "run", "s.yaml", "--providers", "mock",
         "--modes", "react", "--db", "h.duckdb", "--no-progress"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    try:
        for line in proc.stdout:  # the summary: the run is stored and finished
            if "1/1 cells" in line:
                break
        time.sleep(after_s)
        proc.send_signal(signal.SIGTERM)  # the process may be gone already: that is fine too
        out, _ = proc.communicate(timeout=120)
    except ProcessLookupError:
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, (proc.returncode, out)  # before: -15
    assert "Traceback" not in out
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        assert con.execute("SELECT status FROM bench_runs").fetchall() == [("finished",)]
