"""``spawn_agent(subfolder=...)`` raced against a process swapping the folder's name with a
symlink to the host (``renameat2(RENAME_EXCHANGE)``, as a sibling sub-agent's shell in the shared
workspace can do in a loop): the child is never rooted outside the workspace and never reads,
lists or writes the host folder, whether the swap lands at spawn or between the child's calls.

The child workspace is made exactly as the kernel makes it (``_subagents._workspace``), then used
with the real file tools. The loop runs until every outcome was seen many times.
"""

from __future__ import annotations

import asyncio
import ctypes
import subprocess
import sys
import textwrap
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.errors import ToolError
from harness.kernel._subagents import _workspace
from harness.tools import _beneath
from harness.tools._base import ToolContext, ToolOutput
from harness.tools._builtins import ListDirTool, ReadFileTool, WriteFileTool
from harness.tools._workspace import Workspace

#: Spawns processes, sandboxes, browsers, clusters or servers (the fast loop skips it).
pytestmark = pytest.mark.slow

SECRET = "HOST-SECRET-51c9"
ROUNDS = 3_000  # spawns at least
MAX_ROUNDS = 40_000

SWAPPER = textwrap.dedent(
    """
    import ctypes, os, sys
    libc = ctypes.CDLL(None, use_errno=True)
    os.chdir(sys.argv[1])
    while True:  # 'a' is a folder holding b/, 'alt' a symlink to the host: exchange them
        libc.renameat2(-100, b"a", -100, b"alt", 2)
    """
)


def _has_renameat2() -> bool:
    return hasattr(ctypes.CDLL(None), "renameat2")


@pytest.fixture
def arena(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    if not _has_renameat2():
        pytest.skip("no renameat2 in this libc")
    ws = tmp_path / "ws"
    (ws / "a" / "b").mkdir(parents=True)
    (ws / "a" / "b" / "inside.txt").write_text("inside\n")
    host = tmp_path / "host"
    (host / "b").mkdir(parents=True)
    (host / "b" / "secret.txt").write_text(SECRET + "\n")
    (host / "secret.txt").write_text(SECRET + "\n")
    (ws / "alt").symlink_to(host)
    proc = subprocess.Popen([sys.executable, "-c", SWAPPER, str(ws)])
    try:
        yield ws, host
        assert proc.poll() is None, "the swapper died"
    finally:
        proc.kill()
        proc.wait()


def _host_state(host: Path) -> list[tuple[str, bytes, int]]:
    return sorted(
        (str(p.relative_to(host)), p.read_bytes(), p.stat().st_mtime_ns)
        for p in host.rglob("*")
        if p.is_file()
    )


async def _content(tool: object, ctx: ToolContext, **args: str) -> tuple[str, bool]:
    try:
        out = await tool.run(args, ctx)  # type: ignore[attr-defined]
    except ToolError as exc:
        return str(exc), False
    return (out.content if isinstance(out, ToolOutput) else str(out)), True


@pytest.mark.parametrize("folder", ["a", "a/b"])
@pytest.mark.parametrize("lookup", ["openat2", "walk"])
def test_a_subfolder_raced_by_a_symlink_swap_never_roots_the_child_outside(
    arena: tuple[Path, Path], folder: str, lookup: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if lookup == "walk":  # a kernel without openat2: the component walk alone
        monkeypatch.setattr(_beneath, "_syscall", None)
    elif not _beneath.openat2_available():
        pytest.skip("this kernel has no openat2")
    ws_path, host = arena
    before = _host_state(host)
    parent = Workspace(ws_path)
    state = types.SimpleNamespace(ctx=types.SimpleNamespace(workspace=parent))
    inside = ws_path.resolve() / folder
    seen = {"spawned": 0, "spawn_refused": 0, "listed": 0, "list_refused": 0}
    refusals: set[str] = set()

    async def race() -> int:
        rounds = 0
        while rounds < MAX_ROUNDS:
            rounds += 1
            try:
                child = _workspace(state, folder)  # type: ignore[arg-type]
            except ToolError as exc:
                refusals.add(str(exc))
                seen["spawn_refused"] += 1
                await asyncio.sleep(0.0005)  # let a starved swapper run (busy CI cores)
                continue
            seen["spawned"] += 1
            assert child is not None
            assert child.root == inside  # never a host path
            ctx = ToolContext(child, "race")
            text, ok = await _content(ListDirTool(), ctx, path=".")
            assert "secret" not in text
            seen["listed" if ok else "list_refused"] += 1
            text, ok = await _content(ReadFileTool(), ctx, path="secret.txt")
            assert SECRET not in text
            if ok or "replaced" not in text:  # the child found its own folder: nothing there
                assert not ok
                assert "not found" in text, text
            await _content(WriteFileTool(), ctx, path="pwned.txt", content="pwned")
            if rounds >= ROUNDS and min(seen.values()) >= 100:
                break
        return rounds

    rounds = asyncio.run(race())
    assert _host_state(host) == before  # not one byte, not one touch
    assert sorted(p.name for p in host.iterdir()) == ["b", "secret.txt"]
    assert sorted(p.name for p in (host / "b").iterdir()) == ["secret.txt"]
    # The swap really raced the calls: each outcome seen (100 on a quiet machine; a loaded one
    # starves the swapper, so fewer are demanded than are aimed at).
    assert min(seen.values()) >= 20, (rounds, seen)
    outside = f"spawn_agent: path refused: {folder!r} resolves outside the workspace (symlink)"
    loops = f"spawn_agent: path refused: {folder!r}: too many levels of symlinks"  # swapped 40x
    assert outside in refusals
    assert refusals <= {outside, loops}  # never "is a file" for a folder swapped mid-lookup
    print(f"\nsubfolder race ({lookup}, {folder}): {rounds} rounds, {seen}")
