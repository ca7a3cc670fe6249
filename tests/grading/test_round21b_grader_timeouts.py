"""A fault found by adversary round 21, part B (issue 34): a grader's ``timeout_s`` was bounded
below only. ``timeout_s: .inf`` or ``1.0e+300`` passed ``suites validate``; then a ``python``
grader made every cell an error (``OverflowError: timestamp out of range for platform
time_t``), a ``command`` grader with ``.inf`` likewise, and with ``1.0e+300`` **failed** every
cell whatever the model did (``true``: ``exit code 1; output: ...prlimit: failed to parse CPU
limit``). Each is refused at validate now. Fails on 84cec7a."""

from __future__ import annotations

import pytest

from harness.grading import parse_grader

_SPECS = {
    "command": {"kind": "command", "command": "true"},
    "python": {"kind": "python", "function": "m:grade"},
    "judge": {"kind": "judge", "rubric": "correct", "provider": "mock"},
}


@pytest.mark.parametrize("kind", sorted(_SPECS))
@pytest.mark.parametrize("timeout", [float("inf"), 1e300, 86_401.0])
def test_a_grader_timeout_past_a_day_is_refused(kind: str, timeout: float) -> None:
    with pytest.raises(ValueError, match="timeout_s"):
        parse_grader({**_SPECS[kind], "timeout_s": timeout})


@pytest.mark.parametrize("kind", sorted(_SPECS))
def test_a_long_grader_timeout_is_taken(kind: str) -> None:
    assert parse_grader({**_SPECS[kind], "timeout_s": 3600.0}).timeout_s == 3600.0  # type: ignore[attr-defined]
