"""``extract_structured`` searches a schema's patterns over the model's reply with stdlib ``re``
(issue 34, adversary round 22, part A; fixed by the lead in stop 48).

The ``json_schema`` grader searches a schema's ``pattern`` with ``regex`` under a time budget
(round 20 B: ``^(a|aa)+$`` over 46 ``a`` and a ``!`` took 284 s); ``extract_structured``'s
validator (``harness/kernel/_structured.py``) still uses jsonschema's default, stdlib ``re``,
on the event loop, holding the GIL: a reply ``{"x": "aaa...a!"}`` of 38 ``a`` took 35 s, and
each ``a`` more 1.6 times as long (a common e-mail pattern backtracks as badly). The fix needs
the grader's budgeted search (``harness/grading/_schema_search.py``, layer 6) moved below the
kernel (layer 3) and the validation run on a thread."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

_SCRIPT = """
import json, harness
reply = json.dumps({"x": "a" * 44 + "!"})
schema = {"type": "object", "properties": {"x": {"type": "string", "pattern": "^(a|aa)+$"}}}
r = harness.extract_structured("q", schema=schema, provider="mock", max_retries=0,
                               provider_opts={"turns": [{"text": reply, "for": "structured"}]})
print(r.finish_reason)
"""


@pytest.mark.slow
def test_a_backtracking_schema_pattern_does_not_hold_the_run() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    try:
        run = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True,
                             text=True, timeout=30, check=False)  # fmt: skip
    except subprocess.TimeoutExpired:  # (about 10 minutes on 0624268)
        pytest.fail("extract_structured was still searching the schema's pattern after 30 s")
    assert run.stdout.strip() == "error_max_structured_output_retries", run.stderr
