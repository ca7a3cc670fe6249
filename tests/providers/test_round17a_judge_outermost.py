"""A judge's failing verdict holding objects of its own (issue 34, adversary round 17, part
A). The verdict search took the whole reply, fenced objects, then objects holding no other
(``\\{[^{}]*\\}``): ``Verdict: {"passed": false, "score": 0.1, "criteria": {"accuracy":
{"passed": true}}}`` (per-criterion verdicts, a word before or after) was read from its inner
``{"passed": true}`` and stored **passed**, 1.0. Now the outermost objects are tried first.
Through a real loopback judge (OpenAI's wire format) too."""

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

NESTED = (
    'Verdict: {"passed": false, "score": 0.1, "criteria": {"accuracy": {"passed": true, '
    '"score": 1.0}}, "explanation": "wrong"} thanks'
)


@pytest.mark.parametrize(
    ("reply", "passed", "score"),
    [
        (NESTED, False, 0.1),  # True, 1.0 before
        ('{"passed": false, "criteria": [{"name": "tone", "passed": true}]}\nDone.', False, 0.0),
        ('{"passed": false, "detail": {"score": 0.95}} done', False, 0.0),  # True, 0.95 before
        ('{"score": 0.2, "notes": "x"} and {"passed": true}', False, 0.2),
        ('So: {"verdict": {"passed": true}} ok', True, 1.0),  # an inner one still counts
        (
            '{"passed": false, "explanation": "the answer {\\"passed\\": true} is wrong"} ok',
            False,
            0.0,
        ),
    ],
    ids=["criteria", "list", "inner-score", "first-wins", "only-inner", "escaped"],
)
def test_the_outermost_verdict_is_read_first(reply: str, passed: bool, score: float) -> None:
    verdict = grade(mock_judge(reply), answered())
    assert not verdict.error, verdict.explanation
    assert (verdict.passed, verdict.score) == (passed, score)


def test_a_reply_of_braces_is_read_quickly() -> None:
    verdict = grade(mock_judge("{" * 300_000 + '{"a": "' * 50_000), answered())
    assert verdict.error
    assert "gave no verdict (no JSON object with passed or score)" in verdict.explanation


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_loopback_judge_with_per_criterion_verdicts_fails_the_cell(tmp_path: Path) -> None:
    body = {
        "id": "x", "model": "m", "usage": {"prompt_tokens": 3, "completion_tokens": 3},
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": NESTED}}],
    }  # fmt: skip
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "OPENAI_API_KEY": "sk-r17a"}
    with FaultServer([Fault.raw(http_response(200, json.dumps(body)))], lifetime_s=120) as server:
        (tmp_path / "s.yaml").write_text(
            "suite: s\ntasks:\n  - id: a\n    prompt: hi\n    mock: {turns: [{text: hi}]}\n"
            "    expect: {kind: judge, provider: 'openai:m', rubric: says hi, "
            f"provider_opts: {{base_url: '{server.url}/v1', max_retries: 0}}}}\n"
        )
        proc = subprocess.run(
            [sys.executable, "-m", "harness.cli", "run", "s.yaml", "--providers", "mock",
             "--modes", "react", "--db", "h.duckdb", "--no-progress", "--record-mode", "all"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=150,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        row = con.execute("SELECT status, score FROM results").fetchone()
    assert row == ("failed", 0.1)  # ('passed', 1.0) before
