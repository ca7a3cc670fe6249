"""A grading search run in a process of its own with the patterns' time limit at 1 s (10 s as
shipped): the common part of the tests of searches that backtracked for ever (round 16 B)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

__all__ = ["printed_within"]

#: Lowers the time limit where there is one (before the fix there was none).
_ONE_SECOND = (
    "try:\n    import harness.grading._patterns as p\n    p.REGEX_TIME_LIMIT_S = 1.0\n"
    "except ImportError:  # before the fix\n    pass\n"
)


def printed_within(code: str, what: str, timeout_s: float = 45) -> str:
    """What ``code`` prints, run after the limit is lowered; the test fails naming ``what`` if
    it is still running after ``timeout_s``."""
    try:
        done = subprocess.run([sys.executable, "-c", _ONE_SECOND + code], capture_output=True,
                              text=True, timeout=timeout_s, env=dict(os.environ))  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail(f"{what} was still running after {timeout_s:g} s")
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()
