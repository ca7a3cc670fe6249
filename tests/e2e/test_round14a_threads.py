"""A plug-in's plain function that never returns (issue 34, adversary round 14, part A).

A tool made from a plain function and a ``slow`` grader's synchronous ``evaluate`` ran on the
event loop's default executor. At ``tool_timeout_s`` (or the grader's ``time_limit_s``) the
model was told, but the thread ran on, and the loop's closing (``shutdown_default_executor``)
and the interpreter's exit both join that executor's threads: ``harness.run`` returned only when
the function did (30 s for a 30 s sleep with ``tool_timeout_s=1``), and ``harness run`` never
ended (its cells stored, its summary never printed; the SIGTERM of ``timeout 90`` did nothing
for ten minutes). Now such a function runs on a daemon thread of its own
(``harness._sync.in_thread``), left behind when its run ends.
"""

from __future__ import annotations

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


@harness.tool
def sleepy(x: str) -> str:
    """Blocks for 30 s (or until the test ends)."""
    RELEASE.wait(30)
    return "late"


@pytest.mark.timeout(60)
def test_harness_run_does_not_wait_for_a_plain_tool_past_its_timeout() -> None:
    provider = MockProvider(
        turns=[{"tool_calls": [{"name": "sleepy", "arguments": {"x": "y"}}]}, {"text": "done"}]
    )
    started = time.monotonic()
    try:
        result = harness.run("hi", tools=[sleepy], provider=provider, tool_timeout_s=0.5)
        took = time.monotonic() - started
    finally:
        RELEASE.set()
    assert result.finish_reason == "stop"
    assert "timed out after 0.5s" in next(m.content for m in result.messages if m.role == "tool")
    assert took < 10, took  # 30 s before: harness.run waited for the thread


@harness.tool(parallel_safe=True)
def held(i: int) -> str:
    """Blocks for 60 s (or until the test ends)."""
    RELEASE_HELD.wait(60)
    return "late"


@harness.tool
def quick(i: int) -> str:
    """Answers at once."""
    return "quick ok"


RELEASE_HELD = threading.Event()


@pytest.mark.timeout(90)
def test_tools_left_running_do_not_starve_the_next_plain_tool() -> None:
    """The default executor has min(32, cores + 4) threads: 8 calls left running held them all
    (6 on 2 cores) and an innocent plain tool after them timed out (``harness.run``: 61 s)."""
    calls = [{"name": "held", "arguments": {"i": i}} for i in range(8)]
    turns = [{"tool_calls": calls}, {"tool_calls": [{"name": "quick", "arguments": {"i": 0}}]}]
    provider = MockProvider(turns=[*turns, {"text": "done"}])
    try:
        result = harness.run(
            "hi", tools=[held, quick], provider=provider, tool_timeout_s=1, max_concurrency=8
        )
    finally:
        RELEASE_HELD.set()
    told = [m.content for m in result.messages if m.role == "tool"]
    assert told[-1] == "quick ok"  # "error: tool call 'quick' timed out after 1s" before


PLUGIN = """\
import time
from typing import ClassVar, Literal

import harness
from harness.grading import Grader


@harness.tool
def forever(x: str) -> str:
    \"\"\"Never returns.\"\"\"
    while True:
        time.sleep(1)


class Forever(Grader):
    kind: Literal["forever"] = "forever"
    slow: ClassVar[bool] = True
    time_limit_s: ClassVar[float] = 1.0

    def evaluate(self, result, context):
        while True:
            time.sleep(1)
"""

CONTAINS = "{kind: contains, value: hi}"
SUITES = {
    "tool": (
        "[{tool_calls: [{name: forever, arguments: {x: y}}]}, {text: hi}]",
        "['plug14a:forever']",
        CONTAINS,
    ),
    "grader": ("[{text: hi}]", "[]", "{kind: 'plug14a:Forever'}"),
}


@pytest.mark.slow
@pytest.mark.timeout(200)
@pytest.mark.parametrize("where", sorted(SUITES))
def test_harness_run_ends_with_a_plain_function_that_never_returns(
    tmp_path: Path, where: str
) -> None:
    turns, tools, expect = SUITES[where]
    (tmp_path / "plug14a.py").write_text(PLUGIN)
    (tmp_path / "s.yaml").write_text(
        "suite: s\ndefaults: {tool_timeout_s: 1}\ntasks:\n"
        f"  - {{id: a, prompt: hi, tools: {tools}, expect: {expect}, mock: {{turns: {turns}}}}}\n"
        f"  - {{id: b, prompt: hi, expect: {CONTAINS}, mock: {{turns: [{{text: hi}}]}}}}\n"
    )
    proc = started_run(tmp_path)
    try:
        out, _ = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:  # before: for ever (SIGTERM too)
        proc.kill()
        out, _ = proc.communicate()
        pytest.fail(f"harness run did not end in 120 s:\n{out}")
    assert proc.returncode == 3, out
    assert "2/2 cells" in out, out
    assert "Traceback" not in out
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT task_id, status FROM results ORDER BY task_id").fetchall()
    assert rows == [("a", "error"), ("b", "passed")]
