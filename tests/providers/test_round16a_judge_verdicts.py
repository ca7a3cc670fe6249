"""A judge's verdict with ``passed`` quoted or not a boolean (issue 34, adversary round 16,
part A). The verdict's ``passed`` was taken with ``bool()``: ``{"passed": "false"}`` (small
models quote JSON booleans) was stored **passed** with a score of 1.0, ``{"passed": "false",
"score": 0.9}`` passed, ``"passed": []`` failed; ``"score": true`` counted as 1.0. A reply
whose text first nests arrays past the JSON parser ended as the grader's ``RecursionError``
though a verdict followed. Now ``"true"`` / ``"false"`` are read as the booleans they spell,
anything else that is not a boolean gives no verdict (an error cell), and a candidate the parser
cannot nest is skipped. Through a real loopback judge (Anthropic's wire format) too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from fault_server import Fault, FaultServer, http_response

from harness.grading import grade
from tests.grading.test_judge_grader import answered, mock_judge


@pytest.mark.parametrize(
    ("reply", "passed", "score"),
    [
        ('{"passed": "false", "explanation": "x"}', False, 0.0),  # passed, 1.0 before
        ('{"passed": "false", "score": 0.9, "explanation": "x"}', False, 0.9),  # passed before
        ('{"passed": " TRUE ", "explanation": "x"}', True, 1.0),
        ('{"passed": null, "score": 0.9, "explanation": "x"}', True, 0.9),
        ("[" * 50_000 + "]" * 50_000 + ' {"passed": true, "explanation": "x"}', True, 1.0),
    ],
    ids=["false", "false-with-score", "true-spaced", "null", "deep-before"],
)
def test_a_quoted_passed_is_read_as_the_boolean_it_spells(
    reply: str, passed: bool, score: float
) -> None:
    verdict = grade(mock_judge(reply), answered())
    assert not verdict.error, verdict.explanation
    assert (verdict.passed, verdict.score) == (passed, score)


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ('{"passed": [], "score": 0.9}', "passed is [], not true or false"),
        ('{"passed": "yes", "score": 0.9}', "passed is 'yes', not true or false"),
        ('{"passed": true, "score": true}', "score True is not a number"),
    ],
    ids=["list", "yes", "bool-score"],
)
def test_a_passed_or_score_of_another_kind_gives_no_verdict(reply: str, why: str) -> None:
    verdict = grade(mock_judge(reply), answered())
    assert verdict.error
    assert f"gave no verdict ({why})" in verdict.explanation


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_loopback_judge_quoting_false_fails_the_cell(tmp_path: Path) -> None:
    message = {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m",
        "content": [{"type": "text", "text": '{"passed": "false", "explanation": "no hi"}'}],
        "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 5},
    }  # fmt: skip
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "ANTHROPIC_API_KEY": "sk-r16a"}
    with FaultServer(
        [Fault.raw(http_response(200, json.dumps(message)))], lifetime_s=120
    ) as server:
        (tmp_path / "s.yaml").write_text(
            "suite: s\ntasks:\n  - id: a\n    prompt: hi\n    mock: {turns: [{text: hi}]}\n"
            "    expect: {kind: judge, provider: 'anthropic:m', rubric: says hi, "
            f"provider_opts: {{base_url: '{server.url}', max_retries: 0}}}}\n"
        )
        proc = subprocess.run(
            [sys.executable, "-m", "harness.cli", "run", "s.yaml", "--providers", "mock",
             "--modes", "react", "--db", "h.duckdb", "--no-progress", "--record-mode", "all"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=150,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        row = con.execute("SELECT status, score FROM results").fetchone()
    assert row == ("failed", 0.0)  # ('passed', 1.0) before
