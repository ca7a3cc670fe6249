"""A process swapping a workspace name between a file and a symlink to the host, raced against
thousands of file tool calls: nothing outside the workspace is ever read, listed or written.

The swapper is a real second process (like another agent's ``shell`` loop); each swap is an
atomic ``rename`` so the name is always one or the other. The loops run until both outcomes were
seen many times, so the race is really exercised whatever the machine's speed.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.errors import ToolError
from harness.tools import _beneath
from harness.tools._base import ToolContext, ToolOutput
from harness.tools._builtins import (
    EditFileTool,
    GlobTool,
    GrepTool,
    ListDirTool,
    ReadFileTool,
    WriteFileTool,
)
from harness.tools._workspace import Workspace

SECRET = "HOST-SECRET-7f3a"
ROUNDS = 2_000  # tool calls of each kind at least
MAX_ROUNDS = 40_000

SWAPPER = textwrap.dedent(
    """
    import os, shutil, sys
    ws, secret, secret_dir = sys.argv[1:4]
    f, d, tmp = (os.path.join(ws, n) for n in ("f", "d", ".swap-tmp"))

    def swap(i):
        if i % 2:  # regular file f, real directory d
            with open(tmp, "w") as fh:
                fh.write("inside text\\n")
            os.replace(tmp, f)
            if os.path.islink(d):
                os.unlink(d)
            os.mkdir(d)
        else:  # both links to the host
            os.symlink(secret, tmp)
            os.replace(tmp, f)
            if not os.path.islink(d):
                trash = os.path.join(ws, f".trash-{i}")
                os.rename(d, trash)
                shutil.rmtree(trash)
            os.symlink(secret_dir, tmp)
            os.replace(tmp, d)

    i = 0
    while True:
        i += 1
        try:
            swap(i)
        except OSError:
            for junk in (tmp,):
                try:
                    os.unlink(junk)
                except OSError:
                    pass
    """
)


@pytest.fixture
def arena(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "host"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET + "\n")
    proc = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(ws), str(outside / "secret.txt"), str(outside)]
    )
    try:
        yield ws, outside
        assert proc.poll() is None, "the swapper died"
    finally:
        proc.kill()
        proc.wait()


def _host_state(outside: Path) -> list[tuple[str, bytes, int]]:
    return sorted(
        (p.name, p.read_bytes(), p.stat().st_mtime_ns) for p in outside.iterdir() if p.is_file()
    )


async def _content(tool: object, ctx: ToolContext, **args: str) -> tuple[str, bool]:
    try:
        out = await tool.run(args, ctx)  # type: ignore[attr-defined]
    except ToolError as exc:
        return str(exc), False
    return (out.content if isinstance(out, ToolOutput) else str(out)), True


@pytest.mark.slow
@pytest.mark.parametrize("lookup", ["openat2", "walk"])
def test_reads_and_writes_racing_a_symlink_swap_never_leave_the_workspace(
    arena: tuple[Path, Path], lookup: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if lookup == "walk":  # a kernel without openat2: the component walk alone
        monkeypatch.setattr(_beneath, "_syscall", None)
    elif not _beneath.openat2_available():
        pytest.skip("this kernel has no openat2")
    ws_path, outside = arena
    before = _host_state(outside)
    ctx = ToolContext(Workspace(ws_path), "race")
    seen = {"read_ok": 0, "read_refused": 0, "write_ok": 0, "write_refused": 0}

    async def race() -> int:
        rounds = 0
        while rounds < MAX_ROUNDS:
            rounds += 1
            text, ok = await _content(ReadFileTool(), ctx, path="f")
            assert SECRET not in text
            seen["read_ok" if ok else "read_refused"] += 1
            text, ok = await _content(WriteFileTool(), ctx, path="f", content=f"model {rounds}")
            seen["write_ok" if ok else "write_refused"] += 1
            text, _ = await _content(EditFileTool(), ctx, path="f", old="inside", new="edited")
            assert SECRET not in text
            text, _ = await _content(ReadFileTool(), ctx, path="d/secret.txt")
            assert SECRET not in text
            await _content(WriteFileTool(), ctx, path="d/pwned.txt", content="pwned")
            text, _ = await _content(ListDirTool(), ctx, path="d")
            assert "secret.txt" not in text
            if rounds % 50 == 0:
                text, _ = await _content(GlobTool(), ctx, pattern="**/*")
                assert "secret" not in text
                text, _ = await _content(GrepTool(), ctx, pattern="HOST")
                assert SECRET not in text
            if rounds >= ROUNDS and min(seen.values()) >= 100:
                break
        return rounds

    rounds = asyncio.run(race())
    assert _host_state(outside) == before  # not one byte, not one touch
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    # the swap really raced the calls: both outcomes, many times each
    assert min(seen.values()) >= 100, (rounds, seen)
    print(f"\nrace ({lookup}): {rounds} rounds, {seen}")


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "out.txt")
    ctx = ToolContext(Workspace(tmp_path), "fifo")

    async def calls() -> list[str]:
        out = []
        for tool, args in [
            (ReadFileTool(), {"path": "out.txt"}),
            (WriteFileTool(), {"path": "out.txt", "content": "x"}),
            (EditFileTool(), {"path": "out.txt", "old": "a", "new": "b"}),
            (GrepTool(), {"pattern": "x", "path": "out.txt"}),
            (GrepTool(), {"pattern": "x"}),
        ]:
            out.append((await _content(tool, ctx, **args))[0])
        return out

    read, write, edit, grep_one, grep_all = asyncio.run(calls())
    assert read == "out.txt is not a regular file (a FIFO)"
    assert write == "out.txt is not a regular file (a FIFO)"
    assert edit == "out.txt is not a regular file (a FIFO)"
    assert grep_one.startswith("no matches")
    assert "searched 0 files" in grep_one
    assert "searched 0 files" in grep_all
    assert (tmp_path / "out.txt").is_fifo()  # not replaced either
