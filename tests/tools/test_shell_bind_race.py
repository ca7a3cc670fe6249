"""The ``shell`` tool of a sub-agent working in a ``subfolder``, raced against a process swapping
that folder's name with a symlink to a host folder (``renameat2(RENAME_EXCHANGE)``, as a
sibling's shell in the shared parent workspace can do in a loop): the sandbox binds the folder the
harness holds by descriptor, never a name, so the command never lists, writes or chowns the host
folder, whichever moment the swap lands (before the lookup, between the lookup and bwrap, inside
bwrap's own set-up, during the hand-over of the folder to the sandbox's uid).

Real bubblewrap, real racing process. Both ways of binding are raced: ``--bind-fd`` (bwrap
checks the mount is the descriptor's folder) and, for a bwrap without it, the name the descriptor
has now plus a check inside the sandbox that ``/workspace`` is the held folder.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness.errors import ToolError
from harness.tools import _sandbox
from harness.tools._base import ToolContext
from harness.tools._sandbox import sandbox_problem
from harness.tools._shell import ShellTool
from harness.tools._workspace import Workspace

#: Spawns processes, sandboxes, browsers, clusters or servers (the fast loop skips it).
pytestmark = pytest.mark.slow

SECRET = "HOST-SECRET-7d2e"
RUNS = 300  # shell commands started at least (bwrap starts in 10 to 30 ms)
MAX_RUNS = 1_000
ENOUGH = 50  # of each outcome: ran in the held folder, refused before bwrap
COMMAND = "ls -a; echo x > probe"

SWAPPER = textwrap.dedent(
    """
    import ctypes, os, sys
    libc = ctypes.CDLL(None, use_errno=True)
    os.chdir(sys.argv[1])
    while True:  # 'a' is the child's folder, 'alt' a symlink to the host: exchange them
        libc.renameat2(-100, b"a", -100, b"alt", 2)
    """
)


@pytest.fixture
def arena(tmp_path: Path) -> Iterator[tuple[Workspace, Path, Path, Callable[[], None]]]:
    if not hasattr(ctypes.CDLL(None), "renameat2"):
        pytest.skip("no renameat2 in this libc")
    problem = sandbox_problem()
    if problem is not None:
        pytest.fail(f"the sandbox tests need bubblewrap: {problem}")
    ws = tmp_path / "ws"
    (ws / "a").mkdir(parents=True)
    (ws / "a" / "inside.txt").write_text("inside\n")
    host = tmp_path / "host"
    (host / "b").mkdir(parents=True)
    (host / "b" / "secret.txt").write_text(SECRET + "\n")
    (host / "secret.txt").write_text(SECRET + "\n")
    (ws / "alt").symlink_to(host)
    child = Workspace(ws).subfolder("a")  # pinned before the swapping starts
    proc = subprocess.Popen([sys.executable, "-c", SWAPPER, str(ws)])

    def stop() -> None:  # before the test looks at names itself
        assert proc.poll() is None, "the swapper died"
        proc.kill()
        proc.wait()

    try:
        yield child, host, ws, stop
    finally:
        proc.kill()
        proc.wait()


def _host_state(host: Path) -> list[tuple[str, bytes, int, int, int, int]]:
    """Every entry of the host folder (itself too): bytes, owner, mode, mtime and ctime (a chown
    and back changes the ctime)."""
    out = []
    for p in [host, *host.rglob("*")]:
        st = p.lstat()
        data = p.read_bytes() if p.is_file() else b""
        out.append((str(p.relative_to(host)), data, st.st_uid, st.st_mode, st.st_mtime_ns,
                    st.st_ctime_ns))  # fmt: skip
    return sorted(out)


@pytest.mark.parametrize("bind", ["bind-fd", "by-name-checked"])
def test_a_subfolder_swapped_for_a_host_symlink_never_reaches_the_sandbox(
    arena: tuple[Workspace, Path, Path, Callable[[], None]],
    bind: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if bind == "by-name-checked":  # a bwrap without --bind-fd (before 0.10)
        monkeypatch.setattr(_sandbox, "_binds_fd", lambda bwrap: False, raising=False)
    elif not getattr(_sandbox, "_binds_fd", bool)("bwrap"):
        pytest.skip("this bwrap has no --bind-fd")
    child, host, ws, stop = arena
    before = _host_state(host)
    ctx = ToolContext(child, "race")
    tool = ShellTool()
    seen = {"ran": 0, "refused": 0, "stopped": 0}
    others: set[str] = set()
    refusals: set[str] = set()

    async def race() -> int:
        runs = 0
        while runs < MAX_RUNS:
            try:
                out = str(await tool.run({"command": COMMAND, "timeout_s": 20}, ctx))
            except ToolError as exc:  # the lookup found the link: refused in microseconds
                refusals.add(str(exc))
                seen["refused"] += 1
                await asyncio.sleep(0.002)  # let the swapper (maybe off the CPU) swap again
                continue
            runs += 1
            assert "secret" not in out, out  # the host folder was never listed
            lines = out.splitlines()
            if lines[0] == "exit code 0":
                assert "inside.txt" in lines, out
                seen["ran"] += 1
            else:  # bwrap found the mount was not the held folder, or the check inside did
                seen["stopped"] += 1
                others.add(lines[-1])
            if runs >= RUNS and seen["ran"] >= ENOUGH and seen["refused"] >= ENOUGH:
                break
        return runs

    runs = asyncio.run(race())
    stop()
    assert _host_state(host) == before  # not one byte, not one chown, not one new file
    assert sorted(p.name for p in host.iterdir()) == ["b", "secret.txt"]
    assert seen["ran"] >= ENOUGH, (runs, seen)  # the swap really raced the runs
    assert seen["refused"] >= ENOUGH, (runs, seen)
    replaced = (
        "shell: the workspace folder 'a' was removed or replaced (by a symlink or a file) since "
        "this agent started in it"
    )
    assert refusals == {replaced}
    folder = next(p for p in (ws / "a", ws / "alt") if not p.is_symlink())  # wherever it is
    assert (folder / "probe").read_text() == "x\n"
    assert folder.stat().st_uid == os.getuid()  # given back after every command
    print(f"\nshell bind race ({bind}): {runs} runs, {seen}, stopped by: {sorted(others)}")


@pytest.mark.skipif(os.geteuid() != 0, reason="the workspace is lent (chown) only as root")
def test_lending_the_workspace_never_chowns_through_a_folder_swapped_for_a_link(
    arena: tuple[Workspace, Path, Path, Callable[[], None]],
) -> None:
    """As root the workspace is chowned to the sandbox's uid and back around each command: the
    walk, racing the swap of ``a`` (a folder in the workspace) with a host link, never changes
    the owner of a host file (the code before walked by name and lent host files)."""
    _, host, ws, stop = arena
    (host / "deep").mkdir()
    for i in range(20):
        (host / "deep" / f"f{i}").write_text("host\n")
    before = _host_state(host)
    ctx = ToolContext(Workspace(ws), "top")
    tool = ShellTool()

    async def race() -> list[str]:
        return [str(await tool.run({"command": "ls a/"}, ctx)) for _ in range(RUNS)]

    outs = asyncio.run(race())
    stop()
    assert _host_state(host) == before  # no owner, no ctime changed
    listed = [out for out in outs if out.startswith("exit code 0")]  # 'a' was the folder
    assert len(listed) >= ENOUGH
    assert all(out.endswith("inside.txt") for out in listed)
    assert len(listed) < len(outs)  # 'a' was the link at other times (no host inside: exit 2)
    lent = [(p, p.lstat().st_uid) for p in [ws, *ws.rglob("*")] if p.lstat().st_uid != 0]
    assert not lent  # everything given back
