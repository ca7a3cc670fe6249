"""Faults found by adversary round 20, part B (issue 34), in the ``json_schema`` grader.

jsonschema searched the schema's ``pattern`` with stdlib ``re`` on the event loop: ``^(a|aa)+$``
over a reply of 46 ``a`` and a ``!`` took 284 s, and ``harness run`` answered neither the
grader's time limit nor SIGTERM meanwhile (round 14's fault of the ``regex`` grader, through JSON
Schema); a remote ``$ref`` was fetched at every grading with no timeout (a server that never
answered held the run); ``uniqueItems`` over 8,000 objects took 72 s on the event loop. Each
test fails on 218441d."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import harness
from harness.core import Result
from harness.errors import SuiteError
from harness.grading import parse_grader
from harness.grading._structured import JsonSchemaGrader

_GRADE = textwrap.dedent(
    """
    import json, sys, time
    import harness
    import harness.grading._patterns as patterns
    from harness.grading import grade, parse_grader
    patterns.REGEX_TIME_LIMIT_S = 1.0  # (regex checks its limit coarsely under load)
    schema, reply = json.loads(sys.argv[1]), sys.argv[2]
    result = harness.run("t", provider="mock", provider_opts={"turns": [{"text": reply}]})
    started = time.monotonic()
    verdict = grade(parse_grader({"kind": "json_schema", "schema": schema}), result)
    print(json.dumps([verdict.passed, verdict.error, verdict.explanation,
                      time.monotonic() - started]))
    """
)


def _graded(schema: str, reply: str) -> list[object]:
    """The verdict of a grading in a child process (the old code held the GIL for minutes)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run(
        [sys.executable, "-c", _GRADE, schema, reply],
        capture_output=True, text=True, timeout=60, env=env, check=True,
    )  # fmt: skip
    import json

    return list(json.loads(out.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    "schema",
    [
        '{"type": "string", "pattern": "^(a|aa)+$"}',
        '{"type": "object", "patternProperties": {"^(a|aa)+$": {"type": "integer"}}}',
        '{"type": "object", "patternProperties": {"^(a|aa)+$": {}}, "additionalProperties": false}',
    ],
)
def test_a_backtracking_schema_pattern_is_stopped_at_the_time_limit(schema: str) -> None:
    reply = '"' + "a" * 44 + '!"' if "string" in schema else '{"' + "a" * 44 + '!": "x"}'
    passed, error, explanation, took = _graded(schema, reply)
    assert (passed, error) == (False, True)
    assert "the schema's patterns took over 1 s" in str(explanation)
    # on 218441d: minutes, the child killed at 60 s (subprocess.TimeoutExpired)
    assert isinstance(took, float)


def test_a_remote_reference_is_never_fetched(tmp_path: Path) -> None:
    listener = socket.socket()  # accepts (the backlog) and never answers
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    fifo = tmp_path / "schema.json"
    os.mkfifo(fifo)  # a file:// reference read from it blocked for ever
    try:
        port = listener.getsockname()[1]
        for ref in (f"http://127.0.0.1:{port}/s.json", fifo.as_uri()):
            passed, error, explanation, took = _graded(f'{{"$ref": "{ref}"}}', '{"a": 1}')
            assert (passed, error) == (False, True)
            assert "Unresolvable" in str(explanation)
            assert float(str(took)) < 5
    finally:
        listener.close()


def test_a_schema_pattern_the_regex_grader_refuses_is_refused() -> None:
    for pattern in ("(?<=a+)b", "(?:(?:a{1000}){1000}){1000}"):
        with pytest.raises(ValueError, match="schema"):
            parse_grader({"kind": "json_schema", "schema": {"pattern": pattern}})
    nested: dict[str, object] = {"properties": {"x": {"patternProperties": {"(?<=a+)b": {}}}}}
    with pytest.raises(ValueError, match="look-behind"):
        parse_grader({"kind": "json_schema", "schema": nested})
    data = {"enum": [{"pattern": "(?<=a+)b"}]}  # data, not a pattern: left alone
    assert parse_grader({"kind": "json_schema", "schema": data}).kind == "json_schema"


def test_the_grader_runs_off_the_event_loop() -> None:
    # uniqueItems compares every pair of objects: 8,000 took 72 s, on the loop before
    assert JsonSchemaGrader.slow


def test_a_suite_with_such_a_pattern_is_refused_at_validate(tmp_path: Path) -> None:
    from harness.suites import load_suite

    suite = tmp_path / "s.yaml"
    suite.write_text(
        "suite: s\ntasks:\n  - id: a\n    prompt: hi\n    expect:\n      kind: json_schema\n"
        "      schema: {type: string, pattern: '(?<=a+)b'}\n"
    )
    with pytest.raises(SuiteError, match="look-behind"):
        load_suite(suite)


def test_patterns_that_match_still_pass() -> None:
    result = harness.run("t", provider="mock", provider_opts={"turns": [{"text": '"abc"'}]})
    assert isinstance(result, Result)
    from harness.grading import grade

    ok = grade(parse_grader({"kind": "json_schema", "schema": {"pattern": "^a.c$"}}), result)
    assert ok.passed
    no = grade(parse_grader({"kind": "json_schema", "schema": {"pattern": "^x"}}), result)
    assert not no.passed
    assert not no.error
