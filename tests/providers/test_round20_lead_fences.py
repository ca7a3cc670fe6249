"""The fence patterns of text tool calls on runs of backticks (issue 34, adversary round 20,
part B; fixed by the lead). ``(?P<fence>`{3,}|...)`` tried every shorter fence from each start
in a run of backticks, though no backtick may follow a fence: 24 KB of backticks took 23 s
holding the GIL. The backtick fence is now taken whole (``{3,}+``); the matches are the old
patterns', checked here on seeded random replies. The long reply (48,000 backticks) ran past
a minute on 061f279 (the test's limit ends it)."""

from __future__ import annotations

import random
import re

import pytest

from harness.providers import _text_tool_parse

_OLD_FENCE = re.compile(
    r"(?P<fence>`{3,}|~{3,})[ \t]*(?P<tag>[^\s`~]*)[^\n`]*\n"
    r"(?P<body>.*?)(?P=fence)(?:(?![A-Za-z0-9_`])[^\n`]*)?(?=\n|$)",
    re.DOTALL,
)
_OLD_OPEN = re.compile(r"(?P<fence>`{3,}|~{3,})[ \t]*(?P<tag>[\w-]+)[ \t]*\n", re.IGNORECASE)
_PIECES = ["`", "`", "`", "~", "~", "\n", "\n", " ", "\t", "x", "json", "tool_call", "```",
           "~~~", "_", "-", "TOOL_CALL"]  # fmt: skip


def _matches(pattern: re.Pattern[str], text: str) -> list[tuple[tuple[int, int], dict[str, str]]]:
    return [(m.span(), m.groupdict()) for m in pattern.finditer(text)]


@pytest.mark.parametrize("seed", range(3))
def test_the_matches_are_the_old_patterns(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(20_000):
        text = "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 30)))
        assert _matches(_text_tool_parse._FENCE, text) == _matches(_OLD_FENCE, text), repr(text)
        opened = _matches(_text_tool_parse._OPEN_CALL_FENCE, text)
        assert opened == _matches(_OLD_OPEN, text), repr(text)


@pytest.mark.timeout(60)
def test_a_run_of_backticks_is_read_at_once() -> None:
    text = "`" * 48_000
    assert _matches(_text_tool_parse._FENCE, text) == []
    assert _matches(_text_tool_parse._OPEN_CALL_FENCE, text) == []
