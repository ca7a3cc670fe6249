"""A grader that never returns (adversary round 9, issue 34): a plug-in grader whose
``evaluate`` awaited for ever held ``harness run`` with no bound (killed by ``timeout`` after
105 s). Every grader kind now has a wall-clock bound per verdict, ``Grader.time_limit_s``
(default :data:`~harness.grading._base.DEFAULT_TIME_LIMIT_S`, 30 minutes: an LLM judge on a
slow local model writes about a token a second); past it the grading is cancelled and the cell
is an error cell naming the limit. Kinds that bound their own work (python, command, judge,
bfcl, humaneval, all/any) set ``None``."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import ClassVar, Literal

import duckdb
import pytest
from click.testing import CliRunner

import harness
from harness.cli import main
from harness.errors import ConfigError
from harness.grading import GRADERS, Grade, GradeContext, Grader, agrade, parse_grader
from harness.grading._base import DEFAULT_TIME_LIMIT_S


def _result() -> harness.Result:
    return harness.run("say hi", provider="mock", provider_opts={"turns": [{"text": "hi"}]})


class Forever(Grader):
    kind: Literal["test-forever"] = "test-forever"
    time_limit_s: ClassVar[float | None] = 0.3
    cancelled: ClassVar[list[bool]] = []

    async def evaluate(self, result: harness.Result, context: GradeContext) -> Grade:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.append(True)
            raise
        raise AssertionError("unreachable")


class SlowThread(Grader):
    kind: Literal["test-slow-thread"] = "test-slow-thread"
    slow: ClassVar[bool] = True
    time_limit_s: ClassVar[float | None] = 0.3
    release: ClassVar[threading.Event] = threading.Event()

    def evaluate(self, result: harness.Result, context: GradeContext) -> Grade:
        self.release.wait(30)
        return Grade.of(True, "late")


class OwnTimeout(Grader):
    kind: Literal["test-own-timeout"] = "test-own-timeout"

    async def evaluate(self, result: harness.Result, context: GradeContext) -> Grade:
        raise TimeoutError("the judge's server did not answer")


class Plain(Grader):
    kind: Literal["test-plain"] = "test-plain"

    async def evaluate(self, result: harness.Result, context: GradeContext) -> Grade:
        return Grade.of(True, "ok")


def test_a_grader_that_never_returns_is_stopped_at_its_limit_as_an_error() -> None:
    Forever.cancelled.clear()
    verdict = asyncio.run(agrade(Forever(), _result()))
    assert verdict.error
    assert not verdict.passed
    assert verdict.explanation.startswith("test-forever grader error: no verdict within")
    assert "time limit of 0.3 s" in verdict.explanation
    assert "time_limit_s" in verdict.explanation  # says what to change
    assert Forever.cancelled == [True]  # cancelled, not left running on the loop


def test_a_slow_synchronous_grader_on_its_thread_is_not_waited_for_past_its_limit() -> None:
    SlowThread.release.clear()
    try:
        verdict = asyncio.run(agrade(SlowThread(), _result()))
    finally:
        SlowThread.release.set()
    assert verdict.error
    assert "no verdict within its time limit of 0.3 s" in verdict.explanation


def test_a_grader_s_own_timeout_error_is_a_crash_not_the_limit() -> None:
    verdict = asyncio.run(agrade(OwnTimeout(), _result()))
    assert verdict.error
    assert verdict.explanation == (
        "test-own-timeout grader error: TimeoutError: the judge's server did not answer"
    )


def test_a_combined_grader_bounds_each_part_by_the_part_s_limit() -> None:
    GRADERS.register("test-forever", Forever, replace=True)
    GRADERS.register("test-plain", Plain, replace=True)
    both = parse_grader(
        {"kind": "all", "graders": [{"kind": "test-plain"}, {"kind": "test-forever"}]}
    )
    verdict = asyncio.run(agrade(both, _result()))
    assert verdict.error
    assert not verdict.passed
    assert "no verdict within its time limit of 0.3 s" in verdict.explanation


def test_a_plug_in_kind_gets_the_default_and_kinds_bounding_their_own_work_none() -> None:
    assert Plain.time_limit_s == DEFAULT_TIME_LIMIT_S == 1800.0
    own = {"python", "command", "judge", "all", "any"}
    assert {name for name in own if GRADERS.get(name).time_limit_s is None} == own
    # the quick text graders keep the default as a safety net
    assert GRADERS.get("contains").time_limit_s == DEFAULT_TIME_LIMIT_S


BAD_LIMIT = """\
from typing import Literal

from harness.grading import Grade, Grader


class Bad(Grader):
    kind: Literal["bad"] = "bad"
    time_limit_s = {limit}

    async def evaluate(self, result, context):
        return Grade.of(True, "ok")
"""


@pytest.mark.parametrize("bad", ["0", "-1.0", "float('inf')", "float('nan')", "'60'", "True"])
def test_a_kind_with_a_bad_time_limit_is_refused_when_looked_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: str
) -> None:
    module = f"bad_limit_{abs(hash(bad))}"
    (tmp_path / f"{module}.py").write_text(BAD_LIMIT.format(limit=bad))
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError, match="time_limit_s must be a number of seconds above 0"):
        GRADERS.get(f"{module}:Bad")


PLUGIN = """\
import asyncio
from typing import ClassVar, Literal

from harness.grading import Grade, Grader


class Forever(Grader):
    kind: Literal["forever"] = "forever"
    time_limit_s: ClassVar[float | None] = 1.0

    async def evaluate(self, result, context):
        await asyncio.Event().wait()
"""

SUITE = """\
suite: s
tasks:
  - {id: a, prompt: hi, expect: {kind: contains, value: hi}, mock: {turns: [{text: hi}]}}
  - {id: b, prompt: hi, expect: {kind: "forever_grader:Forever"}, mock: {turns: [{text: hi}]}}
"""


@pytest.mark.timeout(600)  # before: the run never ended (pytest-timeout stops it)
def test_harness_run_with_a_grader_that_never_returns_ends_with_an_error_cell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "forever_grader.py").write_text(PLUGIN)
    (tmp_path / "s.yaml").write_text(SUITE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    args = ["run", "s.yaml", "--modes", "react", "--providers", "mock", "--db", "h.duckdb"]
    args.append("--no-progress")
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 3, done.output
    assert "Traceback" not in done.output
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        rows = con.execute(
            "SELECT task_id, status, grader_explanation FROM results ORDER BY task_id"
        ).fetchall()
    assert [(task, status) for task, status, _ in rows] == [("a", "passed"), ("b", "error")]
    assert "no verdict within its time limit of 1 s" in rows[1][2]
