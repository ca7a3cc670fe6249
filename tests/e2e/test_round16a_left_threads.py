"""Threads a plug-in leaves running that the loop's closing or the interpreter's exit join
(issue 34, adversary round 16, part A).

Round 14 ran a plain tool on a daemon thread of its own; an async tool that awaits
``asyncio.to_thread(f)`` still puts ``f`` on the loop's default executor. At the tool's timeout
the tool is cancelled and ``f`` runs on, and Python 3.11's ``shutdown_default_executor`` joins
it without a limit: ``harness.run`` did not return until ``f`` did, and ``harness run`` never
printed its summary (the SIGTERM of ``timeout`` was taken as a stop and waited too; killed at
last by SIGKILL). Round 14's fix for a late SIGTERM (ignored once the summary is printed) also
made a teardown held by a plug-in (an exit hook, a pool of its own) deaf to ``timeout``. Now
the loop's closing waits for its executor a grace period, and ``harness run`` ends at most
``TEARDOWN_LIMIT_S`` after its summary, with its exit code.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import threading
import time
from pathlib import Path

import duckdb
import pytest

import harness
from harness.providers import MockProvider
from tests.signalled_run import started_run

RELEASE = threading.Event()  # set at the end of the test: the thread left behind ends


def _blocks() -> None:
    RELEASE.wait(60)


@harness.tool
async def waits_on_a_thread(x: str) -> str:
    """Awaits a blocking function on the loop's default executor."""
    await asyncio.to_thread(_blocks)
    return "late"


@pytest.mark.timeout(120)
def test_harness_run_returns_with_an_async_tools_thread_left_running() -> None:
    provider = MockProvider(
        turns=[
            {"tool_calls": [{"name": "waits_on_a_thread", "arguments": {"x": "y"}}]},
            {"text": "done"},
        ]
    )
    started = time.monotonic()
    try:
        result = harness.run("hi", tools=[waits_on_a_thread], provider=provider, tool_timeout_s=0.5)
        took = time.monotonic() - started
    finally:
        RELEASE.set()
    assert result.finish_reason == "stop"
    assert "timed out after 0.5s" in next(m.content for m in result.messages if m.role == "tool")
    assert took < 20, took  # 60 s before: until the thread ended


PLUGIN = """\
import asyncio
import atexit
import time

import harness


def _forever():
    while True:
        time.sleep(1)


@harness.tool
async def on_a_thread(x: str) -> str:
    \"\"\"Awaits a function that never returns on the loop's default executor.\"\"\"
    await asyncio.to_thread(_forever)
    return "late"


@harness.tool
def exit_hook(x: str) -> str:
    \"\"\"Leaves an exit hook that never returns.\"\"\"
    atexit.register(_forever)
    return "hi"
"""

SUITES = {
    "to_thread": ("on_a_thread", [("a", "error"), ("b", "passed")], 3),
    "exit_hook": ("exit_hook", [("a", "passed"), ("b", "passed")], 0),
}


@pytest.mark.slow
@pytest.mark.timeout(200)
@pytest.mark.parametrize("where", sorted(SUITES))
def test_harness_run_ends_with_a_thread_or_exit_hook_that_never_returns(
    tmp_path: Path, where: str
) -> None:
    tool, rows, code = SUITES[where]
    (tmp_path / "plug16a.py").write_text(PLUGIN)
    (tmp_path / "s.yaml").write_text(
        "suite: s\ndefaults: {tool_timeout_s: 1}\ntasks:\n"
        f"  - {{id: a, prompt: hi, tools: ['plug16a:{tool}'], expect: {{kind: contains, value: "
        f"hi}}, mock: {{turns: [{{tool_calls: [{{name: {tool}, arguments: {{x: y}}}}]}}, "
        "{text: hi}]}}\n"
        "  - {id: b, prompt: hi, expect: {kind: contains, value: hi}, "
        "mock: {turns: [{text: hi}]}}\n"
    )
    proc = started_run(tmp_path)
    try:
        out, _ = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:  # before: for ever (a SIGTERM too)
        proc.kill()
        out, _ = proc.communicate()
        pytest.fail(f"harness run did not end in 120 s:\n{out}")
    assert proc.returncode == code, out
    assert "2/2 cells" in out, out
    assert "Traceback" not in out
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        stored = con.execute("SELECT task_id, status FROM results ORDER BY task_id").fetchall()
    assert stored == rows


@pytest.mark.slow
@pytest.mark.timeout(200)
def test_three_ctrl_c_during_a_held_teardown_end_it_without_a_traceback(tmp_path: Path) -> None:
    """Three SIGINTs after the summary raised ``KeyboardInterrupt`` into the plug-in's exit hook
    that held the teardown: ``Exception ignored in atexit callback`` and its traceback."""
    (tmp_path / "plug16a.py").write_text(PLUGIN)
    (tmp_path / "s.yaml").write_text(
        "suite: s\ntasks:\n  - {id: a, prompt: hi, tools: ['plug16a:exit_hook'], expect: {kind: "
        "contains, value: hi}, mock: {turns: [{tool_calls: [{name: exit_hook, arguments: {x: y}}]}"
        ", {text: hi}]}}\n"
    )
    proc = started_run(tmp_path)
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            if line.startswith("run ") and "cells" in line:  # the summary: all is stored
                break
        for _ in range(3):
            time.sleep(0.3)
            proc.send_signal(signal.SIGINT)
        started = time.monotonic()
        out, _ = proc.communicate(timeout=60)
        took = time.monotonic() - started
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, out
    assert "Traceback" not in out, out
    assert took < 5, took
