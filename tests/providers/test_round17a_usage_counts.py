"""A live server's token count past 2^63 (issue 34, adversary round 17, part A): an
OpenAI-compatible server answering ``"prompt_tokens": 100000000000000000000000000000`` (a JSON
integer) made the cell's row unstorable in the shard's flush: ``harness run`` ended ``error:
results column 'input_tokens': a value has the wrong type: Python int too large to convert to
C long``, exit 2, with no row stored and the run left ``running`` for ever. Now the reply is the
provider's ``invalid_response`` (an error cell, stored) and the run is ``finished``, exit 3."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from fault_server import Fault, FaultServer, chunked


def _stream(usage: dict[str, int]) -> bytes:
    events = [
        {"id": "x", "model": "m", "choices": [
            {"index": 0, "delta": {"role": "assistant", "content": "hi"}, "finish_reason": None}]},
        {"id": "x", "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {"id": "x", "model": "m", "choices": [], "usage": usage},
    ]  # fmt: skip
    body = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
    return chunked("text/event-stream", body)


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_servers_count_past_a_bigint_is_an_error_cell_not_a_lost_run(tmp_path: Path) -> None:
    huge = {"prompt_tokens": 10**29, "completion_tokens": 3}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "OPENAI_API_KEY": "sk-r17a",
           "HARNESS_LIVE_PREFLIGHT": "0"}  # fmt: skip
    with FaultServer([Fault.raw(_stream(huge))], lifetime_s=120) as server:
        (tmp_path / "harness.toml").write_text(
            f'[providers.loop]\nkind = "openai"\nbase_url = "{server.url}/v1"\nmodel = "m"\n'
            "max_retries = 0\n"
        )
        (tmp_path / "s.yaml").write_text(
            "suite: s\ntasks:\n  - {id: a, prompt: hi, expect: {kind: contains, value: hi}}\n"
        )
        proc = subprocess.run(
            [sys.executable, "-m", "harness.cli", "run", "s.yaml", "--providers", "loop",
             "--modes", "react", "--db", "h.duckdb", "--no-progress", "--record-mode", "all"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=150,
        )  # fmt: skip
    assert proc.returncode == 3, proc.stdout + proc.stderr  # 2, 'error: results column ...'
    assert "usage's input_tokens is 1e+29, past 1e+12" in proc.stderr
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        assert con.execute("SELECT status FROM bench_runs").fetchall() == [("finished",)]
        assert con.execute("SELECT status FROM results").fetchall() == [("error",)]
