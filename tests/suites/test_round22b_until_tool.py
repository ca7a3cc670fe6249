"""A suite's ``until_tool`` names were each checked against a set of the task's tools made
again for every name: quadratic in a suite of a few hundred kilobytes (adversary round 22,
part B): 20,000 of each took 6.7 s to validate, 40,000 of each 40 s, 80,000 minutes, at every
`suites validate` and `harness run` (round 21 bounded the values a suite may hold to a
million, not the work each costs). Fails on 0624268 by its limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.suites._load import load_suite

N = 80_000


@pytest.mark.timeout(90)
def test_many_until_tool_names_are_checked_in_linear_time(tmp_path: Path) -> None:
    names = ", ".join(["calculator"] * N)
    path = tmp_path / "s.yaml"
    path.write_text(
        f"suite: ut\ndefaults:\n  tools: [{names}]\n  until_tool: [{names}]\ntasks:\n"
        "  - id: t1\n    prompt: x\n    expect: {kind: contains, value: x}\n",
        encoding="utf-8",
    )
    suite = load_suite(path)
    assert len(suite.tasks[0].until_tool or ()) == N
