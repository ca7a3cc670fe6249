"""grep's worker process and the interpreter's exit: a script that searches ends with a clean
stderr (loky's executor used to be collected while the interpreter was being torn down, and its
weakref callback printed an ``Exception ignored ... AttributeError`` traceback after the run)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import weakref
from pathlib import Path

import pytest

from harness.tools import _grep_worker as grep_worker

#: Spawns processes, sandboxes, browsers, clusters or servers (the fast loop skips it).
pytestmark = pytest.mark.slow

SCRIPT = textwrap.dedent(
    """
    import asyncio, time

    import harness
    from harness.tools import _grep_worker as grep_worker

    # The grep tool in a run (the default worker, left running at exit).
    result = harness.run(
        "find hello",
        provider="mock",
        tools=["grep"],
        cwd={cwd!r},
        provider_opts={{"turns": [
            {{"tool_calls": [{{"name": "grep", "arguments": {{"pattern": "hel+o"}}}}]}},
            {{"text": "found"}},
        ]}},
    )
    print(result.finish_reason.value, [m.content for m in result.messages if m.role == "tool"])

    # A search killed by its time limit, its exception kept in a reference cycle (as a test
    # framework keeps one), and a worker of its own (as a bench run has).
    kept = []

    async def searches():
        try:
            await grep_worker.run_killable(time.sleep, 60, timeout_s=0.5)
        except TimeoutError as exc:
            kept.append(exc)
            kept.append(kept)
        with grep_worker.using(grep_worker.GrepWorker()):
            print(await grep_worker.run_killable(abs, -3, timeout_s=60))
        print(await grep_worker.run_killable(abs, -4, timeout_s=60))  # a fresh default worker

    asyncio.run(searches())
    """
)


def test_a_script_that_greps_exits_with_a_clean_stderr(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("hello world\n", encoding="utf-8")
    script = tmp_path / "greps.py"
    script.write_text(SCRIPT.format(cwd=str(workspace)), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["stop ['a.txt:1:hello world']", "3", "4"], proc.stdout
    assert "Exception ignored" not in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr


def test_the_exit_hook_stops_every_worker_and_lets_its_executor_go() -> None:
    worker = grep_worker.GrepWorker()
    with grep_worker.using(worker):
        pool = worker.get()
        assert asyncio.run(grep_worker.run_killable(abs, -5, timeout_s=60)) == 5
        assert worker.pool is pool
        gone = weakref.ref(pool)
        del pool
        grep_worker._at_exit()  # what runs at interpreter exit
        assert worker.pool is None
        # Collected now, not later while the interpreter is being torn down.
        assert gone() is None
