"""Faults found by adversary round 21, part B (issue 34): the readers of JSON-lines files read a
line whole, however long. A file of one endless line (a sparse file of zeros, as a crash can
leave; 3 GB here) at ``runs/<run>/cells.jsonl`` or a quarantine's log ended ``harness compact``
and every writer in a ``MemoryError`` traceback (the shard moved, its log line never written);
given to ``harness traces show`` or ``harness cassettes lint --traces`` (which read the whole
file, though a span file may be larger than memory), the same traceback, exit 1. Each test runs
its reader under a 1 GiB address-space limit over a 2 GiB line; each fails on 84cec7a."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

_LIMIT = 1 << 30
#: One span line as the harness writes them.
_SPAN = (
    b'{"traceId":"' + b"ab" * 16 + b'","spanId":"' + b"cd" * 8 + b'","name":"invoke_agent x",'
    b'"kind":1,"startTimeUnixNano":"1000","endTimeUnixNano":"2000","attributes":[],'
    b'"status":{"code":0}}\n'
)


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (_LIMIT, _LIMIT))


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=300, env=env, cwd=cwd,
        preexec_fn=_limited,
    )  # fmt: skip


def _endless(path: Path, after: str = "") -> Path:
    """``path``: 2 GiB of zeros with no line break (sparse), then a line ``after``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        f.truncate(2 << 30)
        f.seek(0, os.SEEK_END)
        f.write(b"\n" + after.encode())
    return path


@pytest.mark.timeout(600)
def test_a_run_folders_json_lines_file_of_an_endless_line_is_read_past(tmp_path: Path) -> None:
    cells = _endless(tmp_path / "cells.jsonl", '{"shard": "s", "cells": ["a"]}\n')
    code = f"from harness._files import json_lines; print(list(json_lines({str(cells)!r})))"
    done = _run(["-c", code], tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[{'shard': 's', 'cells': ['a']}]"


@pytest.mark.timeout(600)
def test_traces_show_skips_an_endless_line(tmp_path: Path) -> None:
    spans = _endless(tmp_path / "spans.jsonl")
    done = _run(["-m", "harness.cli", "traces", "show", str(spans)], tmp_path)
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert "skipped" in done.stderr
    assert done.returncode in (0, 2)


@pytest.mark.timeout(600)
def test_cassettes_lint_reads_a_span_file_line_by_line(tmp_path: Path) -> None:
    (tmp_path / "cassettes").mkdir()
    _endless(tmp_path / "traces" / "spans.jsonl", '{"key": "sk-ant-api03-' + "A" * 90 + '"}\n')
    done = _run(["-m", "harness.cli", "cassettes", "lint", "cassettes", "--traces", "traces"],
                tmp_path)  # fmt: skip
    assert "Traceback" not in done.stdout + done.stderr, done.stderr[-2000:]
    assert "line 1 is longer than" in done.stdout
    assert "line 2" in done.stdout  # the key after it is still found
    assert done.returncode == 2


def test_traces_show_reads_past_a_last_line_torn_inside_a_character(tmp_path: Path) -> None:
    """A crash mid-write can cut a line inside a character (``é`` is two bytes): the whole file
    was refused, ``cannot read ...: 'utf-8' codec can't decode``, exit 2, though unreadable
    lines are to be skipped."""
    path = tmp_path / "torn.jsonl"
    path.write_bytes(_SPAN + b'{"traceId": "ab", "name": "caf' + "é".encode()[:1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-m", "harness.cli", "traces", "show", str(path)],
                          capture_output=True, text=True, timeout=120, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "1 spans" in done.stdout
    assert "torn.jsonl:2: not a JSON span, skipped" in done.stderr


def test_traces_show_names_a_few_unreadable_lines_of_a_binary_file(tmp_path: Path) -> None:
    path = tmp_path / "binary.jsonl"
    path.write_bytes(b"\xff\xfe\x00\n" * 500)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-m", "harness.cli", "traces", "show", str(path)],
                          capture_output=True, text=True, timeout=120, env=env)  # fmt: skip
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) <= 12, done.stderr
    assert "490 more lines skipped" in done.stderr
