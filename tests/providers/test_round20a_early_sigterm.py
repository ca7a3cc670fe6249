"""SIGTERM or SIGHUP before ``harness run``'s cells start (issue 34, adversary round 20, part A).

``harness run`` takes SIGINT, SIGTERM and SIGHUP alike once its event loop runs (the run closed
``interrupted``, exit 130). Before that (its suites loading, a task source computing, the
pre-flight of a live provider, which waits up to its timeout for a server that does not answer)
only SIGINT was taken: SIGTERM (``timeout``, a CI cancel, ``docker stop``) and SIGHUP killed
the process at once, exit -15 / -1, no word said, the run's row left ``running``. A plug-in
task source sleeping, and a loopback server that never answers the pre-flight."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest
from fault_server import Fault, FaultServer

SOURCE = """\
import time

print("LOADING", flush=True)
time.sleep(60)
"""
SUITE = "suite: s\ntasks:\n  - {id: a, prompt: hi, expect: {kind: contains, value: done}}\n"


def _run(folder: Path, args: list[str], started: Callable[[subprocess.Popen[str]], None],
         signum: signal.Signals) -> tuple[int, str]:  # fmt: skip
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), *sys.path]),
           "OPENAI_API_KEY": "sk-early-sigterm"}  # fmt: skip
    env.pop("HARNESS_LIVE_PREFLIGHT", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "run", *args, "--db", "h.duckdb", "--no-progress",
         "--modes", "react", "--label", "L"],
        cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        started(proc)
        proc.send_signal(signum)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, out


@pytest.mark.timeout(120)
def test_sigterm_while_a_task_source_loads_ends_interrupted(tmp_path: Path) -> None:
    (tmp_path / "slow20").mkdir()
    (tmp_path / "slow20" / "__init__.py").write_text("")
    (tmp_path / "slow20" / "src.py").write_text(SOURCE + "def make(a, o):\n    return None\n")

    def loading(proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            if "LOADING" in line:
                return

    code, out = _run(tmp_path, ["slow20.src:make:x", "--providers", "mock"], loading,
                     signal.SIGTERM)  # fmt: skip
    assert code == 130, out  # -15 on 218441d
    assert "interrupted" in out


@pytest.mark.timeout(120)
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_during_the_preflight_closes_the_run_interrupted(
    tmp_path: Path, signum: signal.Signals
) -> None:
    (tmp_path / "s.yaml").write_text(SUITE)
    with FaultServer([Fault.hang()], lifetime_s=60) as server:

        def probed(proc: subprocess.Popen[str]) -> None:
            deadline = time.monotonic() + 60
            while not server.requests and time.monotonic() < deadline:
                time.sleep(0.05)
            assert server.requests, "the pre-flight never came"

        args = ["s.yaml", "--providers", "openai:m", "--record-mode", "all",
                "--provider-opt", f"openai.base_url={server.url}/v1"]  # fmt: skip
        code, out = _run(tmp_path, args, probed, signum)
    assert code == 130, out  # -15 / -1 on 218441d
    assert "interrupted" in out
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        assert con.execute("SELECT status FROM bench_runs").fetchall() == [("interrupted",)]
