"""SIGHUP (a closed terminal, a dropped SSH session) during ``harness run`` (adversary round 12
part A, issue 34 item 16). Before: Python's default for SIGHUP killed the process at once, exit
129, the run left ``running`` with no resume command and its workspace and run folder left in
``/tmp``. Now SIGHUP stops the run as Ctrl-C does: interrupted, exit 130, the finished cell
kept, the resume command printed. A real ``harness run`` process and a real DuckDB file."""

from __future__ import annotations

import signal
from pathlib import Path

import duckdb
import pytest

from tests.signalled_run import run_and_signal

SUITE = """\
suite: hup
tasks:
  - {id: a, prompt: hi, expect: {kind: contains, value: hi}, mock: {turns: [{text: hi}]}}
  - id: b
    prompt: wait
    tools: ["hup12a:wait_long"]
    expect: {kind: contains, value: done}
    mock: {turns: [{tool_calls: [{name: wait_long, arguments: {}}]}, {text: done}]}
"""

TOOL = """\
import asyncio


async def wait_long() -> str:
    \"\"\"Wait.\"\"\"
    print("WAITING", flush=True)
    await asyncio.sleep(600)
    return "waited"
"""


@pytest.mark.timeout(600)
def test_sighup_stops_the_run_as_ctrl_c_does(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(SUITE)
    (tmp_path / "hup12a.py").write_text(TOOL)
    code, rest = run_and_signal(tmp_path, None, ready="WAITING", signum=signal.SIGHUP, times=1,
                                between_s=0, extra=["--concurrency", "1"])  # fmt: skip
    rest = " ".join(rest.split())
    assert "Traceback" not in rest
    assert code == 130, (code, rest)  # before: 129, killed by the signal
    assert "resume with: harness run" in rest, rest
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        assert con.execute("SELECT status FROM bench_runs").fetchall() == [("interrupted",)]
        assert con.execute("SELECT task_id, status FROM results").fetchall() == [("a", "passed")]


def test_an_ignored_sighup_stays_ignored() -> None:
    """Under ``nohup`` SIGHUP is ignored before the run starts; the run leaves it so."""
    from harness.cli._progress import _stop_signals

    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        assert signal.SIGHUP not in _stop_signals()
    finally:
        signal.signal(signal.SIGHUP, before)
    assert signal.SIGHUP in _stop_signals()


CLOSER = """\
import asyncio

from harness.bench import Runner


class Closer:
    def __init__(self, options, sink):
        self.runner = Runner(options, sink)

    def request_stop(self):
        self.runner.request_stop()

    async def run(self, cells, on_outcome=None):
        summary = await self.runner.run(cells, on_outcome)
        asyncio.ensure_future(_linger())  # cancelled as the loop closes
        await asyncio.sleep(0)
        return summary


async def _linger():
    try:
        await asyncio.sleep(600)
    except asyncio.CancelledError:
        print("CLOSING", flush=True)
        await asyncio.sleep(1.0)  # the loop's closing waits for it


def closer(options, sink, context):
    return Closer(options, sink)
"""


@pytest.mark.timeout(600)
def test_a_signal_while_the_loop_closes_does_not_kill_the_run(tmp_path: Path) -> None:
    """Before: between the event loop's own handlers going and the originals coming back (its
    tasks being cancelled, up to 15 s) SIGTERM had its default: the process died (-15) before
    the run was finished in the store, left ``running``. Also seen as round 11's SIGTERM test
    failing 1 run in 2: its third SIGTERM landed there."""
    (tmp_path / "s.yaml").write_text(SUITE.split("  - id: b")[0])
    (tmp_path / "closer12a.py").write_text(CLOSER)
    code, rest = run_and_signal(tmp_path, "closer12a:closer", ready="CLOSING",
                                signum=signal.SIGTERM, times=1, between_s=0)  # fmt: skip
    rest = " ".join(rest.split())
    assert code == 0, (code, rest)  # every cell was stored before the signal
    assert "1/1 cells, 1 passed" in rest, rest
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        assert con.execute("SELECT status FROM bench_runs").fetchall() == [("finished",)]
