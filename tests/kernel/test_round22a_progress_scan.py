"""The no-progress fingerprint reads a tool result in linear time (issue 34, adversary round 22,
part A).

Each iteration's tool results are normalised before they are hashed (``normalise_output``:
durations, times, pids and temporary paths replaced), and its pid pattern was
``(pid|process)(\\s*[:=#]?\\s*)\\d+``: after ``pid`` and a run of spaces with no number, every
split of the run between the two ``\\s*`` was tried, quadratic in the run. A tool result
holding "pid", 30,000 spaces and a digit later (here a model's own tool name, told back to it
as ``error: unknown tool: ...``) held a real CLI run 7.4 s on the event loop; 300 KB, about
12 minutes. The pattern is possessive now; its replacements are the old one's."""

from __future__ import annotations

import random
import re

import pytest

import harness
from harness.kernel._progress import _PATTERNS, normalise_output

_OLD_PID = re.compile(r"(?i)\b(pid|process)(\s*[:=#]?\s*)\d+\b")


@pytest.mark.timeout(30)  # milliseconds here; minutes on 0624268
def test_pid_and_a_run_of_spaces_is_read_in_linear_time() -> None:
    text = "pid" + " " * 150_000 + "x 1"
    assert normalise_output(text) == text
    tabs = "process" + "\t" * 150_000 + ": "
    assert normalise_output(tabs + "42") == tabs + "<pid>"


@pytest.mark.timeout(60)
def test_a_models_tool_name_of_pid_and_spaces_does_not_hold_the_run() -> None:
    name = "pid" + " " * 150_000 + "x1"
    turns = [{"tool_calls": [{"name": name, "arguments": {}}]}, {"text": "done"}]
    result = harness.run("hi", provider="mock", provider_opts={"turns": turns})
    assert (result.finish_reason, result.text) == ("stop", "done")


@pytest.mark.parametrize("seed", range(2))
def test_the_pids_replaced_are_the_old_patterns(seed: int) -> None:
    new, repl = next((p, r) for p, r in _PATTERNS if "pid|process" in p.pattern)
    rng = random.Random(seed)
    pieces = ["pid", "PID", "process", " ", "\t", ":", "=", "#", "1", "23", "x", "\n", "_", "é"]
    for _ in range(50_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        assert new.sub(repl, text) == _OLD_PID.sub(repl, text), text
