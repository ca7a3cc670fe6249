"""A Ctrl-C while ``harness run``'s process ends (issue 34, adversary round 19, part A).

Once its summary is out, ``harness run`` takes SIGINT with a handler of its own (three end the
process with its code). Python puts a signal's default back as the interpreter ends (after the
exit hooks, while it collects what modules held), and a Ctrl-C then killed the process: a
finished run's exit status became a death by SIGINT (-2, the shell's 130) instead of 0.
Found with a SIGINT 0.2 s after the run's compaction began (1,500 cells); here a plug-in holds
that moment open (an object collected as the interpreter ends, sleeping)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

PLUGIN = """\
import os
import time

import harness


class _Late:
    def __del__(self, open=open, sleep=time.sleep, environ=os.environ):
        with open(environ["R19A_ENDING"], "w") as f:
            f.write("ending")
        sleep(3)


_late = _Late()  # collected as the interpreter ends


@harness.tool
def noop(x: str) -> str:
    \"\"\"Answers ok.\"\"\"
    return "ok"
"""
SUITE = (
    "suite: s\ntasks:\n  - {id: a, prompt: hi, tools: ['plug19f:noop'], expect: {kind: contains,"
    " value: done},\n      mock: {turns: [{tool_calls: [{name: noop, arguments: {x: y}}]},"
    " {text: done}]}}\n"
)


@pytest.mark.timeout(120)
def test_a_ctrl_c_as_the_process_ends_keeps_the_runs_exit_code(tmp_path: Path) -> None:
    (tmp_path / "plug19f.py").write_text(PLUGIN)
    (tmp_path / "s.yaml").write_text(SUITE)
    ending = tmp_path / "ending"
    path = os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path, "R19A_ENDING": str(ending)}
    args = ["run", "s.yaml", "--modes", "react", "--providers", "mock", "--db", "h.duckdb",
            "--no-progress"]  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", *args],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 90
    while not ending.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    text = out.decode(errors="replace")
    assert "1/1 cells, 1 passed" in text, text
    assert proc.returncode == 0, text  # -2 (killed by SIGINT) before
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        assert con.execute("SELECT status FROM bench_runs").fetchall() == [("finished",)]
