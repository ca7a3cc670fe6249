"""`harness view` on a port in use says so at once: the socket is bound before the viewer's
stack (Starlette, the report's pandas and scipy) is imported."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

#: Spawns processes, sandboxes, browsers, clusters or servers (the fast loop skips it).
pytestmark = pytest.mark.slow

PROBE = """
import sys
from click.testing import CliRunner
from harness.cli import main
result = CliRunner().invoke(main, ["view", "--db", sys.argv[1], "--port", sys.argv[2]])
print(result.exit_code)
print(result.output)
heavy = ("starlette", "uvicorn", "pandas", "scipy")
print("imported:", sorted(m for m in heavy if m in sys.modules))
"""


def test_a_port_in_use_fails_before_the_stack_loads(tmp_path: Path) -> None:
    db = tmp_path / "h.duckdb"
    duckdb.connect(str(db)).close()
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen(1)
        port = held.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-c", PROBE, str(db), str(port)],
            capture_output=True, text=True, check=False, timeout=120,
        )  # fmt: skip
    lines = done.stdout.splitlines()
    assert lines[0] == "2", done.stdout + done.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in done.stdout
    assert lines[-1] == "imported: []"
