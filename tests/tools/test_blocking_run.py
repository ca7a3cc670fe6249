"""Nothing a tool does blocks a run for good: a FIFO made by the sandboxed shell is refused by the
file tools at once, and Ctrl-C during a long shell command ends `harness run` with exit 130 and
the run marked interrupted. Real `harness run` processes, a real bwrap sandbox, a real DuckDB."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
import zlib
from pathlib import Path

import duckdb
import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bwrap"),
]

FIFO_SUITE = """
suite: fifo
defaults: {tools: [shell, write_file, read_file, list_dir], max_iterations: 8}
tasks:
  - id: fifo
    prompt: "Make a FIFO and write to it."
    expect: {kind: contains, value: "done"}
    mock:
      turns:
        - {tool_calls: [{name: shell, arguments: {command: "mkfifo out.txt"}}]}
        - {tool_calls: [{name: write_file, arguments: {path: out.txt, content: "x"}}]}
        - {tool_calls: [{name: read_file, arguments: {path: out.txt}}]}
        - {tool_calls: [{name: list_dir, arguments: {}}]}
        - {text: "done"}
"""

SLEEP_SUITE = """
suite: sleepy
defaults: {tools: [shell], max_iterations: 4, tool_timeout_s: 900}
tasks:
  - id: sleeps
    prompt: "Wait."
    expect: {kind: contains, value: "done"}
    mock:
      turns:
        - {tool_calls: [{name: shell, arguments: {command: "sleep 600 # TOKEN", timeout_s: 900}}]}
        - {text: "done"}
"""


def _cli(*args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "harness.cli", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "300"},
    )


def _query(db: Path, sql: str) -> list[tuple[object, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_a_fifo_made_by_the_shell_is_refused_and_the_run_ends(tmp_path: Path) -> None:
    (tmp_path / "fifo.yaml").write_text(FIFO_SUITE)
    proc = _cli("run", "fifo.yaml", "--providers", "mock", "--modes", "react", "--no-progress",
                cwd=tmp_path)  # fmt: skip
    _, err = proc.communicate(timeout=300)  # a guard against a hang, not a measure
    assert proc.returncode == 0, err
    db = tmp_path / "reports" / "harness.duckdb"
    assert _query(db, "SELECT status FROM bench_runs") == [("finished",)]
    ((status, blob),) = _query(db, "SELECT status, transcript FROM results")
    assert status == "passed"
    assert isinstance(blob, bytes)
    messages = json.loads(zlib.decompress(blob))["messages"]
    results = [m["content"] for m in messages if m["role"] == "tool"]
    assert results[1:3] == ["error: out.txt is not a regular file (a FIFO)"] * 2  # write, read
    assert results[3] == "out.txt"  # list_dir


def _process_with(token: str) -> bool:
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if token.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                    return True
            except OSError:
                continue
    return False


def test_ctrl_c_during_a_long_shell_command_exits_130_interrupted(tmp_path: Path) -> None:
    token = f"sleep-{uuid.uuid4().hex}"
    (tmp_path / "sleepy.yaml").write_text(SLEEP_SUITE.replace("TOKEN", token))
    proc = _cli("run", "sleepy.yaml", "--providers", "mock", "--modes", "react", "--no-progress",
                cwd=tmp_path)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not _process_with(token) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert _process_with(token), "the shell command never started"
        proc.send_signal(signal.SIGINT)
        sent = time.monotonic()
        _, err = proc.communicate(timeout=60)  # a guard against a hang, not a measure
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    print(f"\nCtrl-C to exit: {took:.2f} s")
    assert proc.returncode == 130, err
    db = tmp_path / "reports" / "harness.duckdb"
    assert _query(db, "SELECT status FROM bench_runs") == [("interrupted",)]
    deadline = time.monotonic() + 30
    while _process_with(token) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _process_with(token), "the sandboxed command outlived the run"
