"""Resource limits of the builtin tools: a catastrophic grep pattern is stopped by its CPU-time
safety net (and never holds the interpreter lock), which ends the run as an infrastructure error
rather than showing the model a load-dependent result; grep's work cap; writes and new files are
capped."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

import harness
from harness.errors import CpuLimitReached, ToolError, ToolSafetyNet
from harness.providers._mock import MockProvider
from harness.tools import _file_tools as file_tools
from harness.tools import _search_tools as search_tools
from harness.tools._base import ToolContext
from harness.tools._builtins import GrepTool, WriteFileTool
from harness.tools._workspace import Workspace

# Exponential in a backtracking engine. The issue's "(a+)+$" is not slow at all in the `regex`
# engine grep uses (it finds no match at once: checked below); this one is.
EVIL = "(a|aa)+$"
VICTIM = "a" * 40 + "!\n"


def ctx(root: Path) -> ToolContext:
    return ToolContext(Workspace(root), "session-1")


async def test_catastrophic_grep_pattern_is_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "victim.txt").write_text(VICTIM)
    monkeypatch.setattr(search_tools, "GREP_TIME_LIMIT_S", 0.5)
    # Unstopped, this search backtracks for longer than the test's timeout.
    with pytest.raises(ToolSafetyNet, match="catastrophic backtracking") as caught:
        await GrepTool().run({"pattern": EVIL}, ctx(tmp_path))
    assert not isinstance(caught.value, ToolError)  # never an error result for the model


def test_the_safety_net_counts_cpu_time_not_waiting() -> None:
    """The net is CPU time: waiting (a search queued behind others on a loaded machine) spends
    none, so only computing meets it. On Ray at load 21 a 30 s wall-clock net stopped a plain
    search and the replay differed."""
    with search_tools._cpu_limit(0.2):
        time.sleep(1.0)  # five times the limit in wall-clock time, no CPU
    with pytest.raises(CpuLimitReached):
        _spin_under_a_cpu_limit(0.2)


def _spin_under_a_cpu_limit(seconds: float) -> None:
    with search_tools._cpu_limit(seconds):
        while True:
            pass


async def test_the_issue_pattern_finishes_at_once(tmp_path: Path) -> None:
    (tmp_path / "victim.txt").write_text(VICTIM)
    # An answer, not the safety net (ToolSafetyNet past GREP_TIME_LIMIT_S): the engine does not
    # backtrack on this pattern.
    out = (await GrepTool().run({"pattern": "(a+)+$"}, ctx(tmp_path))).content
    assert "no matches" in out


@pytest.mark.parametrize("parallel", [False, True], ids=["alone", "beside-another-call"])
def test_a_grep_past_its_safety_net_ends_the_run_as_an_infrastructure_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parallel: bool
) -> None:
    """It used to answer "pattern ... took over 5 s" to the model: under load, a plain grep did
    too, and a replay then differed from its recording."""
    (tmp_path / "victim.txt").write_text(VICTIM)
    monkeypatch.setattr(search_tools, "GREP_TIME_LIMIT_S", 0.5)
    calls = [{"name": "grep", "arguments": {"pattern": EVIL}}]
    if parallel:
        calls.append({"name": "grep", "arguments": {"pattern": "a!"}})
    turns: list[dict[str, Any]] = [{"tool_calls": calls}, {"text": "unreachable"}]
    result = harness.run(
        "search", provider=MockProvider(turns), tools=["grep"], cwd=tmp_path, tool_timeout_s=20
    )
    assert result.finish_reason == "error_during_execution"
    assert result.halted_reason is not None
    assert "ToolSafetyNet" in result.halted_reason
    assert "infrastructure error" in result.halted_reason
    assert not [m for m in result.messages if m.role == "tool" and "searching" in m.content]
    assert result.text != "unreachable"


async def test_grep_stops_reading_at_its_character_cap_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in "abcd":
        (tmp_path / f"{name}.txt").write_text("x" * 60 + "\n")
    monkeypatch.setattr(search_tools, "GREP_MAX_CHARS", 100)  # passed to the worker process
    out = (await GrepTool().run({"pattern": "y"}, ctx(tmp_path))).content
    assert out == (
        "no matches for 'y' in . (searched 2 files; stopped after reading 100 characters of 2 "
        "files; narrow the path)"
    )
    out = (await GrepTool().run({"pattern": "x"}, ctx(tmp_path))).content
    assert (
        out.splitlines()[-1] == "[stopped after reading 100 characters of 2 files; narrow the path]"
    )
    assert out.splitlines()[:2] == ["a.txt:1:" + "x" * 60, "b.txt:1:" + "x" * 60]
    monkeypatch.setattr(search_tools, "GREP_MAX_CHARS", 10_000)
    out = (await GrepTool().run({"pattern": "y"}, ctx(tmp_path))).content
    assert out == "no matches for 'y' in . (searched 4 files)"  # the text below the cap


async def test_write_size_is_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tool = WriteFileTool()
    big = "x" * (file_tools.MAX_WRITE_BYTES + 1)
    with pytest.raises(ToolError, match="write limit"):
        await tool.run({"path": "big.txt", "content": big}, ctx(tmp_path))
    assert not (tmp_path / "big.txt").exists()
    monkeypatch.setenv("HARNESS_MAX_WRITE_BYTES", "10")
    with pytest.raises(ToolError, match="HARNESS_MAX_WRITE_BYTES"):
        await tool.run({"path": "small.txt", "content": "x" * 11}, ctx(tmp_path))
    await tool.run({"path": "small.txt", "content": "x" * 10}, ctx(tmp_path))


async def test_files_per_workspace_are_capped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARNESS_MAX_WORKSPACE_FILES", "3")
    tool = WriteFileTool()
    for i in range(3):
        await tool.run({"path": f"d/f{i}.txt", "content": "x"}, ctx(tmp_path))
    with pytest.raises(ToolError, match="already holds 3 files"):
        await tool.run({"path": "f9.txt", "content": "x"}, ctx(tmp_path))
    # Overwriting an existing file is still allowed.
    await tool.run({"path": "d/f0.txt", "content": "y"}, ctx(tmp_path))


EVIL_SUITE = """\
suite: evil
tasks:
  - id: slow-grep
    prompt: "search"
    tools: [grep]
    workspace: {files: {victim.txt: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!\\n"}}
    expect: {kind: contains, value: x}
    mock:
      turns:
        - tool_calls: [{name: grep, arguments: {pattern: "(a|aa)+$"}}]
        - {text: "done"}
"""


@pytest.mark.slow
def test_ctrl_c_during_a_catastrophic_grep_exits_130_within_2s(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys

    (tmp_path / "evil.yaml").write_text(EVIL_SUITE)
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "run", "evil.yaml", "--providers", "mock",
         "--modes", "react", "--no-progress", "--db", str(tmp_path / "h.duckdb")],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 120  # a loaded machine may take long to import and start

    def grep_worker_started() -> bool:  # the grep runs in a loky worker process (-ww: the
        # whole command line, which a long venv path pushes past ps's default 80 columns)
        children = subprocess.run(
            ["ps", "-ww", "-o", "args=", "--ppid", str(proc.pid)], capture_output=True, text=True
        ).stdout
        return "popen_loky_posix" in children

    try:
        while not grep_worker_started():
            assert proc.poll() is None, proc.communicate()[0]
            assert time.monotonic() < deadline, "the grep worker did not start within 120 s"
            time.sleep(0.1)
        time.sleep(1.0)  # the grep is running (its worker needs ~20 s of backtracking)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)  # a guard against a hang, not a measure
        assert proc.returncode == 130, out
        assert "interrupted" in out
        # Ctrl-C ended the run: it did not wait for the grep's own safety net to stop it.
        assert "catastrophic backtracking" not in out
    finally:  # a failed check must not leave the run (and its grep worker burning a core)
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)  # the run kills its worker on the way out
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.mark.slow
async def test_a_call_waiting_for_the_worker_survives_another_calls_timeout() -> None:
    """One call's limit kills the shared worker: the call queued behind it runs again in a
    fresh worker instead of failing with a cancellation (a lost cell, before)."""
    import asyncio

    from harness.tools import _grep_worker as grep_worker

    grep_worker.shutdown()
    slow = asyncio.ensure_future(grep_worker.run_killable(time.sleep, 30, timeout_s=1.0))
    queued = asyncio.ensure_future(grep_worker.run_killable(abs, -3, timeout_s=60))
    with pytest.raises(TimeoutError):
        await slow
    assert await queued == 3
    grep_worker.shutdown()


UNGUARDED_SCRIPT = """
import harness
print("top level ran", flush=True)
result = harness.run(
    "find hello",
    provider="mock",
    provider_opts={"turns": [
        {"tool_calls": [{"name": "grep", "arguments": {"pattern": "hel+o"}}]},
        {"text": "found it"},
    ]},
    tools=["grep"],
    workspace_files={"a.txt": "hello world\\n"},
)
print("grep said:", [m.content for m in result.messages if m.role == "tool"], flush=True)
"""


@pytest.mark.slow
def test_a_script_without_a_main_guard_runs_grep_once(tmp_path: Path) -> None:
    """The grep worker must not import the user's ``__main__``: with multiprocessing's spawn, a
    script with no ``if __name__ == "__main__"`` guard ran its top level again in the worker,
    whose own run then crashed the grep call ("bootstrapping phase")."""
    import subprocess
    import sys

    script = tmp_path / "script.py"
    script.write_text(UNGUARDED_SCRIPT)
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("top level ran") == 1, out.stdout
    assert "a.txt:1:hello world" in out.stdout, out.stdout
