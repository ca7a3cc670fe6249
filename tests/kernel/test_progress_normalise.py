"""The no-progress fingerprint ignores tool output that varies by itself (durations, timestamps,
PIDs, temporary paths, object addresses), so replays of one cassette end the same way; the model
still sees the output verbatim (issue 24, deterministic replay)."""

from __future__ import annotations

import itertools

import pytest
from conftest import call, script, text, tool_turn

import harness
from harness import FinishReason, Message, ToolResult
from harness.kernel import normalise_output
from harness.kernel._progress import fingerprint

# Two real runs of the same failing pytest file (pytest 9, `-q`), as captured: they differ in the
# duration and in pytest's numbered temporary directory only.
PYTEST_RUN_1 = (
    ".F                                                                       [100%]\n"
    "=================================== FAILURES ===================================\n"
    "___________________________________ test_bad ___________________________________\n\n"
    "tmp_path = PosixPath('/tmp/pytest-of-root/pytest-15/test_bad0')\n\n"
    '>   def test_bad(tmp_path): assert str(tmp_path) == "x" and os.getpid() == 0\n'
    "                            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
    "E   AssertionError: assert ('/tmp/pytest-...-15/test_bad0' == 'x'\n"
    "E     \nE     - x\nE     + /tmp/pytest-of-root/pytest-15/test_bad0)\n\n"
    "test_demo.py:3: AssertionError\n"
    "=========================== short test summary info ============================\n"
    "FAILED test_demo.py::test_bad - AssertionError: assert ('/tmp/pytest-...-15/t...\n"
    "1 failed, 1 passed in 1.59s\n"
)
PYTEST_RUN_2 = PYTEST_RUN_1.replace("-15/", "-16/").replace("in 1.59s", "in 2.38s")

# pytest's default (not -q) summary lines, and the long-run form with a clock time.
SUMMARIES = [
    ("=================== 2 failed, 3 passed in 0.08s ===================", "in <dur>"),
    ("============ 1 passed, 1 warning in 61.27s (0:01:01) ============", "in <dur> (<time>)"),
    ("========================= 12 passed in 0.5s ==========================", "in <dur>"),
]


def test_two_real_pytest_runs_normalise_alike() -> None:
    assert PYTEST_RUN_1 != PYTEST_RUN_2
    assert normalise_output(PYTEST_RUN_1) == normalise_output(PYTEST_RUN_2)
    out = normalise_output(PYTEST_RUN_1)
    assert out.endswith("1 failed, 1 passed in <dur>\n")
    assert "tmp_path = PosixPath('<tmp>')" in out
    assert "test_demo.py:3: AssertionError" in out  # file names and line numbers stay


@pytest.mark.parametrize(("line", "tail"), SUMMARIES)
def test_pytest_summary_lines_lose_their_timing(line: str, tail: str) -> None:
    out = normalise_output(line)
    assert tail in out
    assert out.split(" in ")[0] == line.split(" in ")[0]  # the counts are kept


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("took 12ms", "took <dur>"),
        ("Ran 3 tests in 0.001s", "Ran 3 tests in <dur>"),
        ("real\t0m0.003s", "real\t<dur>"),
        ("  ✓ adds (12 ms)", "  ✓ adds (<dur>)"),
        ("Time:        1.234 s", "Time:        <dur>"),
        ("built at 2026-03-23T12:03:04.123Z ok", "built at <time> ok"),
        ("2026-03-23 12:03:04+01:00 start", "<time> start"),
        ("[12:03:04] INFO ready", "[<time>] INFO ready"),
        ("server pid 4242 listening", "server pid <pid> listening"),
        ("PID=99 exited", "PID=<pid> exited"),
        ("wrote /tmp/tmpk3j4l5m6/out.txt: ok", "wrote <tmp>: ok"),
        ("saved tmpk3j4l5m6.json", "saved <tmp>.json"),
        ("/var/folders/xy/abc123/T/x.py:4: error", "<tmp>:4: error"),
        ("<Foo object at 0x7f3a2c1b9d90>", "<Foo object at <addr>>"),
    ],
)
def test_volatile_parts_become_placeholders(text: str, expected: str) -> None:
    assert normalise_output(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "3 passed",
        "2 failed, 1 passed",
        "version 1.2.3",
        "x = 0.5",
        "total 45",
        "the sum is 45 s-units",
        "Move final_report.pdf into the temp folder",
        "read 10 items from data/tmp.csv",
    ],
)
def test_stable_output_is_left_alone(text: str) -> None:
    assert normalise_output(text) == text


def _result_messages(content: str) -> list[Message]:
    return [Message.tool(ToolResult("c1", content))]


def test_the_fingerprint_ignores_timing_but_not_outcomes() -> None:
    a = fingerprint(_result_messages(PYTEST_RUN_1))
    b = fingerprint(_result_messages(PYTEST_RUN_2))
    assert a == b
    fixed = PYTEST_RUN_1.replace("1 failed, 1 passed", "2 passed")
    assert fingerprint(_result_messages(fixed)) != a


def test_a_repeated_command_whose_only_change_is_its_timing_is_no_progress() -> None:
    durations = itertools.count(1)

    @harness.tool
    def run_tests() -> str:
        """Run the test suite."""
        return f"FAILED test_x.py::test_a\n1 failed in 0.{next(durations):02d}s"

    same = tool_turn(call("run_tests"))
    result = harness.run(
        "make the tests pass",
        provider="mock",
        tools=[run_tests],
        max_unproductive_iterations=2,
        provider_opts=script(same, same, same, same, text("gave up")),
    )
    # Before: every result differed (0.01s, 0.02s...), so the run went on to the answer.
    assert result.finish_reason is FinishReason.ERROR_NO_PROGRESS
    assert result.iterations == 3
    # The model saw the output verbatim: the durations are in the transcript.
    seen = [m.content for m in result.messages if m.role == "tool"]
    assert seen == [f"FAILED test_x.py::test_a\n1 failed in 0.0{i}s" for i in (1, 2, 3)]
