"""``suites audit`` on a task with a long prompt ends at once (issue 34; found by the lead in
stop 47). With a 400 KB prompt it ran past 10 minutes: the echo adversaries' replies were
aligned with the prompt (``repeats_prompt``, quadratic; see ``test_stop47_echo_rule.py``) and
the read-echo trick's path pattern ``[\\w./-]+\\.\\w+`` tried every start in a run of letters
against the rest of it (200 KB of letters: over a minute). The paths are now read in one pass
over the runs of path characters, with the pattern's answers (checked on seeded prompts). A
real CLI run; the limit is only there to end a hang."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main

_OLD_PATH = re.compile(r"[\w./-]+\.\w+")


@pytest.mark.timeout(300)
def test_an_audit_of_a_long_prompt_ends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "s.yaml").write_text(
        "suite: s\ntasks:\n  - id: t\n"
        f'    prompt: "read notes.txt {"a" * 400_000}"\n'
        "    workspace: {files: {notes.txt: hello}}\n"
        "    expect: {kind: contains, value: hello}\n"
        "    mock: {turns: [{text: hello}]}\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(main, ["suites", "audit", "s.yaml"])
    assert done.exit_code == 1, done.output  # read-echo passes it: a finding, as it should
    assert "read-echo: passes 1 of 1 tasks" in done.output, done.output


@pytest.mark.parametrize("seed", range(2))
def test_the_paths_found_are_the_old_patterns(seed: int) -> None:
    from harness.suites._tricks import _paths

    rng = random.Random(seed)
    pieces = ["a", "b", ".", "/", "-", " ", "_", "é", "1", "..", "\n", ",", "x.py", "ü"]
    for _ in range(30_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 25)))
        assert _paths(text) == _OLD_PATH.findall(text), repr(text)
