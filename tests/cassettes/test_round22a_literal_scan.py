"""The redactor reads a reply's JSON string literals in linear time (issue 34, adversary round
22, part A; fixed by the lead: ``scrub_literals``, now in ``harness/cassettes/_jsonliterals.py``).

With a secret set, every text the run stores (the row's text and transcript, spans, the trace
file) goes through ``Redactor.text``; one holding ``\\u`` and a quote has its JSON string
literals decoded and scrubbed (``scrub_literals``: ``_LITERAL.sub``). A literal never closed
(``"`` then ``\\"`` repeated) made the pattern scan to the text's end from every quote after
it: quadratic, holding the GIL. A mock reply of 120 KB took a real CLI run 61 s (a 40 KB one
6 s, with no secret 0.0 s); 300 KB, about 6 minutes. Once a literal is not closed, no literal
follows it (every quote after it is escaped in it), so the scan can stop there."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

_REPLY = 'see \\u0041 "' + '\\"' * 150_000 + " answer"


@pytest.mark.slow
def test_an_unclosed_literal_in_a_reply_does_not_hold_the_run(tmp_path: Path) -> None:
    suite = {"suite": "lit", "tasks": [{
        "id": "t", "prompt": "say it", "expect": {"kind": "contains", "value": "answer"},
        "mock": {"turns": [{"text": _REPLY}]},
    }]}  # fmt: skip
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(suite), encoding="utf-8")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": os.pathsep.join(sys.path),
           "HOME": str(tmp_path), "MY_API_KEY": "sk-round22a-abcdefghijklmnopqrstuv"}  # fmt: skip
    try:
        run = subprocess.run(
            [sys.executable, "-m", "harness.cli", "run", "s.yaml", "--modes", "react",
             "--providers", "mock", "--no-progress", "--db", "h.duckdb"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=45, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail("the run was still scrubbing its reply after 45 s (about 3 s once linear)")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed" in run.stderr + run.stdout
