"""The ``run_python`` tool, against the real ``bwrap``: it runs code, shows the output, stops at its
limit, and sees neither the host's files nor the network."""

from __future__ import annotations

import contextlib
import socket
import threading
from pathlib import Path
from typing import Any

import pytest

from harness.errors import ToolError
from harness.tools._base import ToolContext
from harness.tools._run_python import RunPythonTool, mask_python_folders
from harness.tools._sandbox import sandbox_problem
from harness.tools._workspace import Workspace

#: Spawns processes, sandboxes, browsers, clusters or servers (the fast loop skips it).
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", autouse=True)
def _bwrap_works() -> None:
    problem = sandbox_problem()
    if problem is not None:
        pytest.fail(f"run_python needs bubblewrap: {problem}")


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "tests_hidden.py").write_text("assert False\n")
    return ToolContext(Workspace(root), "s1")


async def run(ctx: ToolContext, code: str, tool: RunPythonTool | None = None) -> str:
    out = await (tool or RunPythonTool()).run({"code": code}, ctx)
    assert isinstance(out, str)
    return out


async def test_runs_the_code_and_returns_exit_code_and_output(ctx: ToolContext) -> None:
    out = await run(ctx, "def add(a, b):\n    return a + b\n\nprint(add(2, 3))\n")
    assert out == "exit code 0\n5"
    assert await run(ctx, "x = 1\n") == "exit code 0\n(no output)"
    failed = await run(ctx, "assert 1 == 2, 'nope'\n")
    assert failed.splitlines()[0] == "exit code 1"
    assert 'File "/workspace/main.py", line 1' in failed
    assert failed.endswith("AssertionError: nope")


async def test_a_fresh_empty_folder_each_call(ctx: ToolContext) -> None:
    out = await run(ctx, "import os\nprint(sorted(os.listdir('.')), os.getcwd())\n")
    assert out == "exit code 0\n['main.py'] /workspace"  # not the run's workspace
    await run(ctx, "open('left.txt', 'w').write('x')\n")
    assert "left.txt" not in await run(ctx, "import os\nprint(os.listdir('.'))\n")


async def test_cannot_read_outside(ctx: ToolContext, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET\n")
    probe = (
        "import os\n"
        f"for p in ({str(secret)!r}, '/etc/passwd', '/home'):\n"
        "    print(p, os.path.exists(p))\n"
    )
    out = await run(ctx, probe)
    assert "TOPSECRET" not in out
    assert out.splitlines()[1:] == [f"{secret} False", "/etc/passwd False", "/home False"]


async def test_no_network(ctx: ToolContext) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    accepted: list[Any] = []

    def accept() -> None:
        with contextlib.suppress(OSError):
            accepted.append(server.accept())

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        probe = (
            "import socket\n"
            f"try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
            "    print('CONNECTED')\n"
            "except OSError as e:\n    print('refused', e.errno)\n"
        )
        out = await run(ctx, probe)
    finally:
        server.close()
        thread.join(timeout=5)
    assert "CONNECTED" not in out
    assert accepted == []


async def test_the_time_limit_kills_a_loop_with_a_fixed_text(ctx: ToolContext) -> None:
    out = await run(ctx, "while True:\n    pass\n", RunPythonTool(timeout_s=1.0))
    assert out == "timed out after the 1 s limit; the program was killed\n(no output)"


async def test_output_is_capped(ctx: ToolContext) -> None:
    out = await run(ctx, "print('x' * 100_000)\n", RunPythonTool(output_bytes=1000))
    assert len(out) < 2000


async def test_python_folders_read_python(ctx: ToolContext) -> None:
    out = await run(ctx, "import json\njson.loads('{')\n")
    assert 'File "<python>/' in out
    import sys

    assert sys.base_prefix not in out
    assert mask_python_folders(f"{sys.prefix}/lib/x.py") == "<python>/lib/x.py"


async def test_bad_arguments_are_tool_errors(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="missing required argument 'code'"):
        await RunPythonTool().run({}, ctx)
    with pytest.raises(ToolError, match="must not be empty"):
        await RunPythonTool().run({"code": "  "}, ctx)
