"""Faults found by adversary round 16, part B (issue 34): the judge grader's reading of its
judge's reply. Its search for a fenced JSON verdict was quadratic in a reply whose fences never
close around one (``"```{}x" * n``: 6.4 s for 96 KB, about 15 minutes for 1.2 MB, holding the
GIL), and a reply nested past the JSON parser's depth raised ``RecursionError`` out of the
grader. Each test fails on 119c2ef."""

from __future__ import annotations

from tests.grading.limited_search import printed_within


def test_a_judge_reply_without_closing_fences_is_read_within_the_limit() -> None:
    read = "from harness.grading._judge import _verdict\nprint(_verdict('```{}x' * 200_000))\n"
    assert printed_within(read, "the verdict's reading") == "None"


def test_a_judge_reply_nested_past_the_parser_is_no_verdict_and_a_verdict_is_still_read() -> None:
    from harness.grading._judge import _verdict

    assert _verdict("[" * 50_000) is None
    fenced = 'Fine.\n```json\n{"passed": true, "score": 1}\n```\n'
    assert _verdict(fenced) == {"passed": True, "score": 1}
    assert _verdict('so {"score": 0.5} then') == {"score": 0.5}
