"""The ``command`` grader: a real command in the real bubblewrap sandbox, after a real run."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import duckdb
import pytest

import harness
from harness.bench._session import BenchRequest, run_bench
from harness.core._result import Result
from harness.grading import Grader, grade, parse_grader
from harness.grading import _command as command_grader
from harness.suites._load import load_suite
from harness.suites._suite import SuiteError
from harness.tools import _sandbox as sandbox

#: Spawns processes, sandboxes, browsers, clusters or servers (the fast loop skips it).
pytestmark = pytest.mark.slow

ADD = "def add(a, b):\n    return a - b\n"
TESTS = "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n"
PYTEST = "python -m pytest -q -p no:cacheprovider"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "calc.py").write_text(ADD)
    (root / "test_calc.py").write_text(TESTS)
    return root


def result() -> Result:
    return harness.run("x", provider="mock", provider_opts={"turns": [{"text": "done"}]})


def g(**fields: Any) -> Grader:
    return parse_grader({"kind": "command", **fields})


def test_passes_on_exit_0_and_fails_otherwise(ws: Path) -> None:
    failing = grade(g(command=PYTEST), result(), ws)
    assert not failing.passed
    assert failing.score == 0.0
    assert not failing.error
    assert "exit code 1" in failing.explanation
    assert "1 failed" in failing.explanation
    (ws / "calc.py").write_text(ADD.replace("a - b", "a + b"))
    passing = grade(g(command=PYTEST), result(), ws)
    assert passing.passed
    assert passing.score == 1.0
    assert "1 passed" in passing.explanation


def test_score_regex_gives_the_score(ws: Path) -> None:
    (ws / "test_more.py").write_text(
        "def test_one():\n    pass\n\ndef test_two():\n    pass\n\ndef test_three():\n    pass\n"
    )
    verdict = grade(g(command=PYTEST, score_regex=r"(\d+) passed", score_max=4), result(), ws)
    assert not verdict.passed  # one test fails: exit 1
    assert verdict.score == 0.75
    assert "score 0.75 (3/4)" in verdict.explanation
    none = grade(g(command="echo nothing", score_regex=r"(\d+) passed"), result(), ws)
    assert none.passed
    assert none.score == 0.0


def test_a_command_that_computes_forever_fails_at_its_cpu_limit(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A wide wall-clock net: however loaded the machine, the CPU limit ends the command first.
    monkeypatch.setattr(command_grader, "WALL_FACTOR", 600)
    verdict = grade(g(command="python -c 'while True: pass'", timeout_s=1), result(), ws)
    assert not verdict.passed
    assert not verdict.error
    assert "killed by SIGXCPU" in verdict.explanation


def test_a_command_that_waits_past_the_wall_clock_net_is_a_grader_error(ws: Path) -> None:
    """The wall clock depends on load: a passing pytest run took over 60 s on a machine at load
    23 and its cells failed. Its expiry is no verdict."""
    verdict = grade(g(command="sleep 600", timeout_s=1), result(), ws)
    assert not verdict.passed
    assert verdict.error
    assert verdict.explanation == (
        "`sleep 600`: still running after 5 s of wall clock (its CPU limit is 2 s); a "
        "wall-clock safety net, so the cell is an infrastructure error, not a verdict"
    )


def test_the_explanation_carries_no_timing(ws: Path) -> None:
    """125 code-suite explanations differed between two replays by pytest's durations."""
    explanations = set()
    for pause in (0, 0.3):  # "1 passed in 0.0Xs", then "1 passed in 0.3Xs"
        (ws / "test_calc.py").write_text(
            f"import time\n\ndef test_add():\n    time.sleep({pause})\n"
        )
        verdict = grade(g(command=PYTEST), result(), ws)
        assert verdict.passed
        explanations.add(verdict.explanation)
    assert explanations == {f"`{PYTEST}`: exit code 0; output: …. [100%] 1 passed in <dur>"}
    echo = "echo took 12.5s at 10:11:12 in /tmp/tmpab12cd34ef, pid 4242, 3 passed in 2s"
    verdict = grade(g(command=echo, score_regex=r"(\d+) passed", score_max=3), result(), ws)
    assert verdict.score == 1.0  # the score reads the output as it was
    assert verdict.explanation.endswith(
        "output: …took <dur> at <time> in <tmp>, pid <pid>, 3 passed in <dur>"
    )


def test_the_command_sees_only_the_workspace(ws: Path, tmp_path: Path) -> None:
    (tmp_path / "answer.txt").write_text("leak")
    verdict = grade(g(command=f"cat {tmp_path}/answer.txt"), result(), ws)
    assert not verdict.passed
    assert "No such file" in verdict.explanation


def test_no_sandbox_is_a_grader_error(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "sandbox_problem", lambda bwrap="bwrap": "bwrap was not found")
    verdict = grade(g(command="touch ran"), result(), ws)
    assert verdict.error
    assert "sandbox is unavailable: bwrap was not found" in verdict.explanation
    assert not (ws / "ran").exists()


def test_all_and_any_combine_command_graders(ws: Path) -> None:
    parts = [
        {"kind": "command", "command": "test -f calc.py"},
        {"kind": "command", "command": PYTEST},
    ]
    both = parse_grader({"kind": "all", "graders": parts})
    verdict = grade(both, result(), ws)
    assert not verdict.passed
    assert verdict.explanation.startswith("all: `test -f calc.py`: exit code 0")
    either = parse_grader({"kind": "any", "graders": parts})
    assert grade(either, result(), ws).passed


@pytest.mark.parametrize(
    ("expect", "message"),
    [
        ("{kind: command}", "expect.command: command needs `command`"),
        ("{kind: command, command: ' '}", "expect.command: give the command to run"),
        ("{kind: command, command: x, score_regex: '(x'}", "expect.score_regex: invalid"),
        ("{kind: command, command: x, score_regex: 'x'}", "expect.score_regex: needs a group"),
        ("{kind: command, command: x, value: y}", "expect.value: `value` is not used by command"),
    ],
)
def test_bad_command_graders_are_named(tmp_path: Path, expect: str, message: str) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(f"suite: s\ntasks:\n  - id: fix-it\n    prompt: P\n    expect: {expect}\n")
    with pytest.raises(SuiteError) as info:
        load_suite(path)
    assert f"{path}:5: task 'fix-it': {message}" in str(info.value)


def test_a_bench_run_grades_with_the_command(tmp_path: Path) -> None:
    suite = tmp_path / "fix.yaml"
    files = json.dumps({"calc.py": ADD, "test_calc.py": TESTS})
    suite.write_text(
        textwrap.dedent(
            f"""\
            suite: fix
            defaults: {{tools: [read_file, edit_file, shell]}}
            tasks:
              - id: fixed
                prompt: Fix add.
                workspace: {{files: {files}}}
                expect: {{kind: command, command: {PYTEST}}}
                mock:
                  turns:
                    - tool_calls:
                        - {{name: edit_file, arguments: {{path: calc.py, old: a - b, new: a + b}}}}
                    - tool_calls: [{{name: shell, arguments: {{command: {PYTEST}}}}}]
                    - text: fixed
              - id: untouched
                prompt: Fix add.
                workspace: {{files: {files}}}
                expect: {{kind: command, command: {PYTEST}}}
                mock: {{turns: [{{text: I did nothing}}]}}
            """
        )
    )
    db = tmp_path / "h.duckdb"
    report = run_bench(BenchRequest(suites=[str(suite)], db=db, progress=False))
    assert report.exit_code == 0
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = dict(con.execute("SELECT task_id, status FROM results").fetchall())
    finally:
        con.close()
    assert rows == {"fixed": "passed", "untouched": "failed"}, str(db)
