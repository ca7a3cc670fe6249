"""Faults found by adversary round 16, part B (issue 34): the patterns a suite gives its graders.
A ``regex`` grader's pattern that the ``regex`` module writes out into gigabytes passed
``suites validate``; a ``command`` grader's ``score_regex`` was searched with stdlib ``re``,
which backtracked for ever holding the GIL (past round 14's fix of the ``regex`` grader). Each
test fails on 119c2ef."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main
from tests.grading.limited_search import printed_within

#: Repeats written out to 10^9 parts: 2 GB and a MemoryError under `ulimit -v 4000000` at the
#: first grading before (the machine's memory without a limit). Never compiled by these tests.
_HUGE = "(?:(?:a{1000}){1000}){1000}"


@pytest.mark.parametrize(
    "expect",
    [
        f"{{kind: regex, value: '{_HUGE}'}}",
        f"{{kind: command, command: 'true', score_regex: '({_HUGE})'}}",
    ],
    ids=["regex", "score_regex"],
)
def test_a_pattern_written_out_into_gigabytes_is_refused_by_validate(
    tmp_path: Path, expect: str
) -> None:
    """Before: `suites validate` said OK (stdlib ``re`` compiles it lazily) and the run's
    grading built it whole. Now it is refused where the suite is read, naming the bound."""
    suite = tmp_path / "s.yaml"
    suite.write_text(
        "suite: s\ntasks:\n  - id: a\n    prompt: p\n    tools: []\n"
        "    workspace: {files: {f.txt: '1'}}\n"
        f"    expect: {expect}\n    mock: {{turns: [{{text: 'a'}}]}}\n",
        encoding="utf-8",
    )
    done = CliRunner().invoke(main, ["suites", "validate", str(suite)])
    assert done.exit_code == 2, done.output
    assert "repeats to more than 50,000 parts" in done.output
    assert "Traceback" not in done.output


def test_patterns_of_ordinary_size_are_kept() -> None:
    """The guard: open bounds, alternatives and the committed suites' kind of pattern pass."""
    from harness.grading._patterns import pattern_problem

    for ok in (
        r"^\d{4}-\d{2}-\d{2}$",
        "a{1,100000}",
        "(?:a{1,1000}){1000}",
        "(a|aa)+$",
        "x{49999}",
    ):
        assert pattern_problem(ok) is None, ok
    assert pattern_problem("a{50001}") is not None
    assert "invalid regular expression" in str(pattern_problem("(unclosed"))


#: The command grader's score search.
_SCORE = (
    "from harness.grading._command import _score\n"
    "try:\n    _score('((a|aa)+)$', 1.0, 'a' * 60 + '!')\n"
    "except TimeoutError:\n    print('stopped')\n"
)


def test_a_score_regex_that_backtracks_for_ever_is_stopped() -> None:
    """Before: ``re.search('((a|aa)+)$', output)`` over 40 ``a`` and ``!`` took 44 s (60: for
    ever), holding the GIL, so SIGTERM did nothing until it ended. Now the search stops at its
    limit (the grader makes that an error cell naming the pattern)."""
    assert printed_within(_SCORE, "the score search") == "stopped"


def test_a_score_regex_still_reads_the_score_as_re_does() -> None:
    """The guard: the first group of the first match is the score."""
    from harness.grading._command import _score

    assert _score(r"(\d+) passed", 5.0, "== 3 passed, 2 failed in 0.1s ==")[0] == 0.6
    assert _score(r"(\d+) passed", 5.0, "no tests ran")[0] == 0.0
