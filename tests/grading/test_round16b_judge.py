"""Faults found by adversary round 16, part B (issue 34): the judge grader's reading of its
judge's reply. Its search for a fenced JSON verdict was quadratic in a reply whose fences never
close around one (``"```{}x" * n``: 6.4 s for 96 KB, about 15 minutes for 1.2 MB, holding the
GIL), and a reply nested past the JSON parser's depth raised ``RecursionError`` out of the
grader. Each test fails on 119c2ef."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

#: The verdict reading with the search's time limit at 1 s (10 s as shipped).
_READ = (
    "try:\n    import harness.grading._patterns as p\n    p.REGEX_TIME_LIMIT_S = 1.0\n"
    "except ImportError:  # before the fix\n    pass\n"
    "from harness.grading._judge import _verdict\n"
    "print(_verdict('```{}x' * 200_000))\n"
)


def test_a_judge_reply_without_closing_fences_is_read_within_the_limit() -> None:
    try:
        done = subprocess.run([sys.executable, "-c", _READ], capture_output=True, text=True,
                              timeout=45, env=dict(os.environ))  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail("the verdict was still being read after 45 s")
    assert done.stdout.strip() == "None", done.stderr


def test_a_judge_reply_nested_past_the_parser_is_no_verdict_and_a_verdict_is_still_read() -> None:
    from harness.grading._judge import _verdict

    assert _verdict("[" * 50_000) is None
    fenced = 'Fine.\n```json\n{"passed": true, "score": 1}\n```\n'
    assert _verdict(fenced) == {"passed": True, "score": 1}
    assert _verdict('so {"score": 0.5} then') == {"score": 0.5}
