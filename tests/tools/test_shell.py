"""The ``shell`` tool and its bubblewrap sandbox, against the real ``bwrap`` (installed by
``nox -s tests``; a missing bwrap fails these tests, it never skips them)."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

import harness
from harness.errors import ToolError
from harness.tools._base import ToolContext
from harness.tools._registry import resolve_tools
from harness.tools._sandbox import (
    SANDBOX_UID_BASE,
    Limits,
    SandboxUnavailable,
    run_command,
    sandbox_problem,
)
from harness.tools._shell import ShellTool
from harness.tools._workspace import Workspace

#: Spawns processes, sandboxes, browsers, clusters or servers (the fast loop skips it).
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", autouse=True)
def _bwrap_works() -> None:
    problem = sandbox_problem()
    if problem is not None:
        pytest.fail(f"the sandbox tests need bubblewrap: {problem}")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("inside\n")
    return root


@pytest.fixture
def ctx(ws: Path) -> ToolContext:
    return ToolContext(Workspace(ws), "s1")


async def shell(ctx: ToolContext, command: str, tool: ShellTool | None = None, **args: Any) -> str:
    out = await (tool or ShellTool()).run({"command": command, **args}, ctx)
    assert isinstance(out, str)
    return out


async def test_runs_in_the_workspace_and_writes_there(ctx: ToolContext, ws: Path) -> None:
    out = await shell(ctx, "pwd; cat notes.txt; echo made > new.txt; mkdir d && echo x > d/y")
    assert out.splitlines() == ["exit code 0", "/workspace", "inside"]
    assert (ws / "new.txt").read_text() == "made\n"
    assert (ws / "d" / "y").read_text() == "x\n"


async def test_the_workspace_keeps_its_owners(ctx: ToolContext, ws: Path) -> None:
    # As root the command runs as a uid of its own: the workspace is lent to it and given back.
    before = (ws / "notes.txt").stat()
    out = await shell(ctx, "id -u; echo more >> notes.txt; mkdir -p made && echo x > made/new.txt")
    uid = out.splitlines()[1]
    if os.geteuid() == 0:
        assert int(uid) >= SANDBOX_UID_BASE
    else:
        assert uid == str(os.geteuid())
    assert _owner(ws / "notes.txt") == (before.st_uid, before.st_gid)
    assert _owner(ws / "made") == _owner(ws)
    assert _owner(ws / "made" / "new.txt") == _owner(ws)


async def test_exit_code_and_stderr_are_reported(ctx: ToolContext) -> None:
    out = await shell(ctx, "echo oops >&2; exit 3")
    assert out == "exit code 3\noops"


def _owner(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_uid, st.st_gid


def _exists(path: str) -> bool:
    return os.path.exists(path)


async def test_writing_outside_the_workspace_fails(ctx: ToolContext, tmp_path: Path) -> None:
    target = tmp_path / "escaped.txt"
    out = await shell(ctx, f"echo x > {target}; echo y > /usr/escaped; touch /etc/escaped")
    assert not target.exists()
    assert not _exists("/usr/escaped")
    assert not _exists("/etc/escaped")
    assert "exit code 1" in out
    assert "Read-only file system" in out


async def test_the_sandbox_root_and_dev_are_read_only(ctx: ToolContext) -> None:
    # Unbounded tmpfs mounts of bwrap's own (with a user namespace the command owns them): only
    # the workspace and the bounded /tmp take writes.
    out = await shell(ctx, "touch /x; touch /dev/shm/x; touch /dev/x; mkdir /y; touch /tmp/ok")
    assert "touch: cannot touch '/x': Read-only file system" in out
    assert "touch: cannot touch '/dev/shm/x': Read-only file system" in out
    assert "touch: cannot touch '/dev/x': Read-only file system" in out
    assert "/tmp/ok" not in out


async def test_files_outside_the_workspace_are_invisible(ctx: ToolContext, tmp_path: Path) -> None:
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("TOPSECRET\n")
    out = await shell(ctx, f"cat {secret}; ls {tmp_path}; ls /home /root; cat /etc/passwd")
    assert "TOPSECRET" not in out
    assert f"cat: {secret}: No such file or directory" in out
    assert f"ls: cannot access '{tmp_path}': No such file or directory" in out
    assert "cat: /etc/passwd: No such file or directory" in out


async def test_no_network(ctx: ToolContext) -> None:
    # A real server on loopback outside: the sandbox cannot reach it (its own loopback is empty).
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    accepted: list[Any] = []

    def accept() -> None:
        with contextlib.suppress(OSError):  # closed at the end of the test: nothing came
            accepted.append(server.accept())

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        probe = (
            "import socket\n"
            "for host in ('127.0.0.1', '1.1.1.1'):\n"
            "    try:\n"
            f"        socket.create_connection((host, {port}), timeout=2); print('CONNECTED')\n"
            "    except OSError as e: print(host, type(e).__name__, e.errno)\n"
        )
        (ctx.workspace.root / "probe.py").write_text(probe)
        out = await shell(ctx, "python probe.py")
    finally:
        server.close()
        thread.join(timeout=5)
    assert "CONNECTED" not in out
    assert "1.1.1.1 OSError 101" in out  # Network is unreachable
    assert not accepted


async def test_no_key_reaches_the_command(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-key-for-the-sandbox-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-fake")
    out = await shell(ctx, "env; cat /proc/1/environ | tr '\\0' '\\n'")
    assert "sk-fake" not in out
    assert "sk-ant" not in out
    assert "API_KEY" not in out
    names = {line.split("=", 1)[0] for line in out.splitlines()[1:] if "=" in line}
    assert names <= {
        "PATH",
        "HOME",
        "LANG",
        "TMPDIR",
        "TERM",
        "PYTHONDONTWRITEBYTECODE",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD",
        "PWD",
    }


async def test_python_and_pytest_are_visible_read_only(ctx: ToolContext) -> None:
    (ctx.workspace.root / "test_a.py").write_text("def test_a():\n    assert 1 + 1 == 2\n")
    out = await shell(ctx, "python -m pytest -q -p no:cacheprovider")
    assert out.startswith("exit code 0")
    assert "1 passed" in out
    probe = await shell(ctx, "python -c \"import sys; open(sys.prefix + '/x', 'w')\"")
    assert "exit code 1" in probe
    assert "Read-only file system" in probe


async def test_an_infinite_loop_stops_at_the_cpu_limit(ctx: ToolContext) -> None:
    out = await shell(ctx, "while :; do :; done", ShellTool(limits=Limits(cpu_s=1)))
    assert out.startswith("killed by SIGXCPU (CPU time limit)")


async def test_a_memory_hog_stops_at_the_memory_limit(ctx: ToolContext) -> None:
    tool = ShellTool(limits=Limits(memory_mb=200))
    out = await shell(ctx, "python -c 'b = bytearray(400 * 1024 * 1024); print(len(b))'", tool)
    assert out.startswith("exit code 1")
    assert "MemoryError" in out


def _processes_with(marker: str, settle_s: float = 10.0) -> list[int]:
    """The processes whose command line holds ``marker``, once those being killed are gone
    (the kernel kills a dead sandbox's PID namespace asynchronously; wait up to ``settle_s``)."""
    deadline = time.monotonic() + settle_s
    while (found := _scan(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return found


def _scan(marker: str) -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                cmdline = Path(entry.path, "cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                found.append(int(entry.name))
    return found


async def test_a_fork_bomb_stops_at_the_process_limit(ctx: ToolContext) -> None:
    # A copy of sleep under this name marks the bomb's processes (unique: tests may run twice).
    marker = f"forkbomb-sentinel-{uuid.uuid4().hex[:8]}"
    setup = f"cp /usr/bin/sleep ./{marker}; "
    tool = ShellTool(limits=Limits(processes=40))
    loop = f"i=0; while [ $i -lt 500 ]; do ./{marker} 600 & i=$((i+1)); done; wait"
    out = await shell(ctx, setup + loop, tool, timeout_s=60)
    assert "Cannot fork" in out  # the 41st process was refused; the shell gave up
    assert _processes_with(marker) == []  # and the sandbox took the other 40 with it
    # The classic bomb, which never gives up: the timeout ends it, and nothing is left.
    bomb = f"b() {{ ./{marker} 600 & b | b & }}; b; exec ./{marker} 600"
    out = await shell(ctx, setup + bomb, tool, timeout_s=3)
    assert out.startswith("timed out after")
    assert _processes_with(marker) == []


async def test_the_timeout_kills_the_whole_group(ctx: ToolContext) -> None:
    marker = f"group-sentinel-{uuid.uuid4().hex[:8]}"
    out = await shell(ctx, f"cp /usr/bin/sleep {marker}; ./{marker} 600 & sleep 600", timeout_s=1)
    assert out.startswith("timed out after")
    assert _processes_with(marker) == []


async def test_output_is_capped(ctx: ToolContext) -> None:
    tool = ShellTool(limits=Limits(output_bytes=1000))
    out = await shell(ctx, "seq 1 100000", tool)
    assert "bytes of output dropped" in out
    assert out.splitlines()[1] == "1"
    assert out.splitlines()[-1] == "100000"
    assert len(out) < 1200


async def test_bad_arguments_are_tool_errors(ctx: ToolContext) -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({}, "missing required argument 'command'"),
        ({"command": "  "}, "must not be empty"),
        ({"command": "true", "timeout_s": -1}, "positive number"),
        ({"command": "true", "cwd": "/"}, "unexpected argument 'cwd'"),
    ]
    for args, message in cases:
        with pytest.raises(ToolError, match=message):
            await ShellTool().run(args, ctx)


async def test_missing_bwrap_makes_the_tool_unavailable_never_unsandboxed(
    ctx: ToolContext, ws: Path
) -> None:
    tool = ShellTool(bwrap="/nonexistent/bwrap")
    with pytest.raises(SandboxUnavailable, match=r"shell sandbox is unavailable.*bwrap"):
        await tool.run({"command": "echo ran > ran.txt"}, ctx)
    assert not (ws / "ran.txt").exists()


async def test_sandbox_none_runs_directly(ctx: ToolContext, ws: Path) -> None:
    out = await shell(ctx, "pwd; env", ShellTool(sandbox="none"))
    assert out.splitlines()[1] == str(ws)
    assert "API_KEY" not in out
    with pytest.raises(ToolError, match="sandbox must be"):
        ShellTool(sandbox="docker")  # type: ignore[arg-type]


async def test_run_command_returns_exit_code(ws: Path) -> None:
    done = await run_command("exit 7", ws, timeout_s=10)
    assert (done.exit_code, done.timed_out, done.ok) == (7, False, False)


def test_in_a_run_each_limit_stops_its_command_and_the_run_goes_on(ws: Path) -> None:
    calls = [
        "b() { b | b & }; b; sleep 600",
        "python -c 'bytearray(8 * 1024 ** 3)'",
        "while :; do :; done",
        "echo still-alive",
    ]
    # The fork bomb ends at its timeout; the others at their limits, well before theirs.
    timeouts = [4, 60, 60, 60]
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "shell", "arguments": {"command": c, "timeout_s": t}}]}
        for c, t in zip(calls, timeouts, strict=True)
    ]
    turns.append({"text": "done"})
    tool = ShellTool(limits=Limits(cpu_s=2, memory_mb=512, processes=40))
    result = harness.run(
        "go", provider="mock", provider_opts={"turns": turns}, tools=[tool], cwd=ws,
        max_iterations=10, max_unproductive_iterations=0,
    )  # fmt: skip
    assert result.finish_reason.value == "stop", result.halted_reason
    outputs = [m.content for m in result.messages if m.role == "tool"]
    assert len(outputs) == 4
    assert outputs[0].startswith("timed out after")
    assert "MemoryError" in outputs[1]
    assert outputs[2].startswith("killed by SIGXCPU")
    assert outputs[3] == "exit code 0\nstill-alive"


def test_the_kernel_tool_timeout_kills_the_sandbox(ws: Path) -> None:
    marker = f"kernel-timeout-sentinel-{uuid.uuid4().hex[:8]}"
    command = f"cp /usr/bin/sleep {marker}; ./{marker} 600"
    call = {"name": "shell", "arguments": {"command": command, "timeout_s": 100}}
    turns = [{"tool_calls": [call]}, {"text": "ok"}]
    result = harness.run(
        "go", provider="mock", provider_opts={"turns": turns}, tools=["shell"], cwd=ws,
        tool_timeout_s=2,
    )  # fmt: skip
    (output,) = [m.content for m in result.messages if m.role == "tool"]
    assert "timed out" in output
    assert _processes_with(marker) == []


def test_the_plan_phase_refuses_the_shell(ws: Path) -> None:
    turns = [{"tool_calls": [{"name": "shell", "arguments": {"command": "touch x"}}]},
             {"text": "ok"}]  # fmt: skip
    result = harness.run(
        "go", provider="mock", provider_opts={"turns": turns}, tools=["shell"], cwd=ws,
        phase="plan",
    )  # fmt: skip
    tool_msgs = [m.content for m in result.messages if m.role == "tool"]
    assert "not available in the plan phase" in tool_msgs[0]
    assert not (ws / "x").exists()


def test_shell_is_a_builtin() -> None:
    (tool,) = resolve_tools(["shell"])
    assert isinstance(tool, ShellTool)
    assert tool.read_only is False
