"""grep's and glob's patterns come from the model: bounded before they cost the harness
(issue 34, adversary round 22, part A).

grep compiled the model's pattern with ``regex`` in the harness's own process (and again in its
worker), and ``regex`` writes out every fixed repetition: the 25-character
``(?:(?:a{1000}){1000}){10}`` held a run 16 s and took 2.9 GB; ``a{4294967294}`` asks for about
a terabyte (a ``MemoryError`` under a 3 GB limit, the machine's memory without one). A suite's
grader patterns were bounded in round 16 (``PATTERN_PARTS_MAX``); grep's now are too, before
anything is compiled, and told to the model as a tool error.

glob matched each component with ``fnmatch``, which reads each ``[`` to the next ``]``:
quadratic, 100,000 ``[`` took 200 s on a thread a tool timeout cannot stop (a script's process
waited for it at exit). A pattern longer than a path (4,096 characters) is refused."""

from __future__ import annotations

import resource

import pytest

import harness
from harness.tools._pattern_size import grep_pattern_problem


def _told(tool: str, pattern: str) -> str:
    turns = [{"tool_calls": [{"name": tool, "arguments": {"pattern": pattern}}]}, {"text": "ok"}]
    result = harness.run(
        "hi", provider="mock", tools=[tool], provider_opts={"turns": turns},
        workspace_files={"a.txt": "hello\n"},
    )  # fmt: skip
    assert result.finish_reason == "stop", result.halted_reason
    return next(m.content for m in result.messages if m.role == "tool")


@pytest.mark.slow  # grep's worker process
@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "pattern",
    ["a{4294967294}", "(?:(?:a{1000}){1000}){1000}", r"\p{L}{10000000}", "x" * 300_000],
    ids=["one-count", "nested", "regex-syntax", "long"],
)
def test_a_pattern_regex_would_build_gigabytes_of_is_refused(pattern: str) -> None:
    limit = 8 * 2**30  # on 0624268: MemoryError here (unbounded: the machine's memory)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        told = _told("grep", pattern)
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    assert told.startswith("error: pattern "), told[:300]
    assert "refused" in told or "more than 50,000 parts" in told, told[:300]


@pytest.mark.slow
def test_ordinary_patterns_still_search() -> None:
    assert _told("grep", r"hel+o") == "a.txt:1:hello"
    assert _told("grep", r"\p{L}{5}") == "a.txt:1:hello"  # regex's own syntax, as before
    assert _told("grep", r"h(?:el){1,3}lo|zq{0,100000}") == "a.txt:1:hello"


@pytest.mark.parametrize(
    ("pattern", "refused"),
    [
        ("a{49999}", False),
        ("a{50001}", True),
        ("(?:ab){25001}", True),
        (r"\p{L}{4000}", False),
        (r"\p{L}{50000}", True),
        ("[" + "a" * 10, False),
        ("a{99999999999999999999}", True),
        ("(" * 5000 + ")" * 5000, False),
    ],
)
def test_the_bound_is_the_graders(pattern: str, refused: bool) -> None:
    assert (grep_pattern_problem(pattern) is not None) is refused


@pytest.mark.timeout(60)  # 0.1 s here; 100,000 '[' took 200 s on 0624268
def test_a_glob_pattern_longer_than_a_path_is_refused() -> None:
    told = _told("glob", "[" * 100_000)
    assert told == "error: pattern of 100,000 characters refused (a path has at most 4,096)"
    assert _told("glob", "*.txt") == "a.txt"
