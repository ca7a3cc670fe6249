"""What ``suites validate`` passed or crashed on, found by mutating the bench's own suites
(stop 48: 1,600 mutated suites, each validated, and run with the mock when valid).

- A mock turn's ``tool_calls`` that is not a list (``1.5``): ``suites validate`` (and ``run``)
  ended in a ``TypeError`` traceback, exit 1.
- A ``file_contains`` grader's ``path`` holding a name longer than the file system allows:
  validate passed (exit 0), and every cell was an error at grading (``File name too long``),
  exit 3. A workspace file's name was refused so already."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main

TOOL_CALLS = """\
    mock:
      turns:
        - {tool_calls: 1.5}
"""

LONG_PATH = """\
    expect: {kind: file_contains, path: "out/%s.txt", value: "7"}
""" % ("n" * 256)


def _suite(folder: Path, task_extra: str) -> Path:
    text = textwrap.dedent("""\
        suite: fuzzed
        tasks:
          - id: t
            prompt: "Say 7."
        """) + ("" if "expect" in task_extra else '    expect: {kind: contains, value: "7"}\n')
    path = folder / "fuzzed.yaml"
    path.write_text(text + task_extra, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (TOOL_CALLS, "mock.turns[0]: tool_calls must be a list, got float"),
        (LONG_PATH, "expect.path: '…nnn"),
    ],
    ids=["tool-calls-not-a-list", "file-name-too-long"],
)
def test_suites_validate_says_what_the_run_would_trip_on(
    tmp_path: Path, extra: str, said: str
) -> None:
    suite = _suite(tmp_path, extra)
    done = CliRunner().invoke(main, ["suites", "validate", str(suite)])
    assert done.exit_code == 2, done.output
    assert said in done.output
    assert "Traceback" not in done.output
    assert len(done.output.strip().splitlines()) == 1


def test_a_long_file_name_is_refused_once_at_validate_not_at_each_grading(tmp_path: Path) -> None:
    suite = _suite(tmp_path, LONG_PATH)
    args = ["run", str(suite), "--providers", "mock", "--modes", "react", "--no-progress"]
    done = CliRunner().invoke(main, [*args, "--db", str(tmp_path / "h.duckdb")])
    assert done.exit_code == 2, done.output  # 3 before: an error cell
    assert "holds a name longer than 255 bytes" in done.output
