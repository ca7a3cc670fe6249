"""glob's work is bounded: repeated ``**`` components visit each directory once per place in
the pattern, and a walk past 100,000 directories or GLOB_MAX_NAMES names looked at stops with an
error result naming the bound (grep has its own limit, in a worker process)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from harness.errors import ToolError
from harness.tools import _search_tools
from harness.tools._base import ToolContext
from harness.tools._builtins import GlobTool
from harness.tools._workspace import Workspace

BOMB = "**/**/**/**/**/**/**/**/nomatch"


def _nested(root: Path, depth: int = 24) -> Path:
    deep = root.joinpath(*(f"d{i}" for i in range(depth)))
    deep.mkdir(parents=True)
    (deep / "f.txt").write_text("x")
    return deep


@pytest.mark.slow
def test_repeated_double_stars_over_24_nested_folders_finish_at_once(tmp_path: Path) -> None:
    _nested(tmp_path)
    script = textwrap.dedent(
        f"""
        import asyncio, sys
        from harness.tools._base import ToolContext
        from harness.tools._builtins import GlobTool
        from harness.tools._workspace import Workspace
        ctx = ToolContext(Workspace(sys.argv[1]), "glob")
        for pattern in ({BOMB!r}, "**/**/**/**/**/**/**/**/f.txt"):
            print(repr(asyncio.run(GlobTool().run({{"pattern": pattern}}, ctx))))
        """
    )
    # a separate process: the walk before this fix ran for hours, and a thread cannot be stopped
    # (the timeout is a guard against a hang, not a measure; benchmarks time the tools)
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    nomatch, found = done.stdout.splitlines()
    assert nomatch == repr(f"no paths match {BOMB!r}")
    assert found == repr("/".join(f"d{i}" for i in range(24)) + "/f.txt")


def test_a_glob_past_the_directory_cap_is_an_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _nested(tmp_path)
    monkeypatch.setattr(_search_tools, "_MAX_DIRS", 10)
    ctx = ToolContext(Workspace(tmp_path), "glob")
    with pytest.raises(ToolError, match=r"looked into more than 10 directories; use a narrower"):
        asyncio.run(GlobTool().run({"pattern": "**/nomatch"}, ctx))


def test_a_glob_past_its_name_cap_is_an_error_naming_it_whatever_the_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cap counts work (names looked at), not seconds: a slow disk changes nothing."""
    _nested(tmp_path)
    monkeypatch.setattr(_search_tools, "GLOB_MAX_NAMES", 5)
    real = os.scandir

    def slow(fd: int) -> object:
        time.sleep(0.01)
        return real(fd)

    ctx = ToolContext(Workspace(tmp_path), "glob")
    want = r"glob '\*\*/nomatch' stopped: it looked at more than 5 names; use a narrower"
    with pytest.raises(ToolError, match=want):
        asyncio.run(GlobTool().run({"pattern": "**/nomatch"}, ctx))
    monkeypatch.setattr(os, "scandir", slow)  # each listing takes 10 ms: the same error
    with pytest.raises(ToolError, match=want):
        asyncio.run(GlobTool().run({"pattern": "**/nomatch"}, ctx))
    monkeypatch.setattr(_search_tools, "GLOB_MAX_NAMES", 1000)
    assert (
        asyncio.run(GlobTool().run({"pattern": "**/nomatch"}, ctx)) == "no paths match '**/nomatch'"
    )
