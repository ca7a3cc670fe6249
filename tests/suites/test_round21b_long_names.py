"""A fault found by adversary round 21, part B (issue 34): a task id (or suite name) of 300
characters passed ``suites validate``; it names the cell's cassette file, so ``harness run
--record-mode once`` called the provider for every cell and then lost every recording
(``cassette_not_saved: ... [Errno 36] File name too long``). Such names are refused at
validate now. Fails on 84cec7a."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main

_SUITE = (
    "suite: {suite}\ntasks:\n  - id: {task}\n    prompt: hi\n"
    "    expect: {{kind: contains, value: x}}\n"
)


@pytest.mark.parametrize(
    ("suite", "task"), [("s", "a" * 300), ("s", "a/" * 99 + "a"), ("s" * 300, "a")]
)
def test_a_name_no_cassette_file_can_have_is_refused(tmp_path: Path, suite: str, task: str) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(_SUITE.format(suite=suite, task=task))
    done = CliRunner().invoke(main, ["suites", "validate", str(path)])
    assert done.exit_code == 2, done.output
    assert "at most 100 characters" in done.output


def test_a_name_of_a_hundred_characters_is_taken(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(_SUITE.format(suite="s" * 100, task="a/" * 49 + "aa"))
    done = CliRunner().invoke(main, ["suites", "validate", str(path)])
    assert done.exit_code == 0, done.output


def test_a_provider_name_no_cassette_folder_can_have_is_refused() -> None:
    """The same for a profile named with 300 characters (``[providers."ppp..."]``): each cell
    called the provider, then lost its recording (``File name too long``); refused before any
    call now, in one line."""
    from harness.cassettes._transport import cassette_path
    from harness.errors import ConfigError

    with pytest.raises(ConfigError, match="too long to name a file or folder"):
        cassette_path("cassettes", "s", "p" * 300, "react", "a", 0)
    assert cassette_path("cassettes", "s", "p" * 100, "react", "a", 0).name == "a.e0.yaml"
