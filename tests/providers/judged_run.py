"""``harness run`` as a process whose one cell is graded by a judge on a loopback server
answering ``reply``: the common part of the tests of judges' verdicts (rounds 16 and 17, A)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
from fault_server import Fault, FaultServer, http_response

__all__ = ["judged_cell"]


def judged_cell(
    folder: Path, reply: dict[str, Any], provider: str, *, path: str = "", key: str
) -> tuple[Any, ...] | None:
    """Run a one-cell suite in ``folder`` graded by ``provider`` (``anthropic:m``,
    ``openai:m``) at the server's address plus ``path``, with the environment variable ``key``
    set; the stored ``(status, score)``. The run must exit 0."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), key: "sk-judged"}
    with FaultServer([Fault.raw(http_response(200, json.dumps(reply)))], lifetime_s=120) as server:
        (folder / "s.yaml").write_text(
            "suite: s\ntasks:\n  - id: a\n    prompt: hi\n    mock: {turns: [{text: hi}]}\n"
            f"    expect: {{kind: judge, provider: '{provider}', rubric: says hi, "
            f"provider_opts: {{base_url: '{server.url}{path}', max_retries: 0}}}}\n"
        )
        proc = subprocess.run(
            [sys.executable, "-m", "harness.cli", "run", "s.yaml", "--providers", "mock",
             "--modes", "react", "--db", "h.duckdb", "--no-progress", "--record-mode", "all"],
            cwd=folder, env=env, capture_output=True, text=True, timeout=150,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with duckdb.connect(str(folder / "h.duckdb"), read_only=True) as con:
        return con.execute("SELECT status, score FROM results").fetchone()
