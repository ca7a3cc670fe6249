"""Graders that defeat their own time limit (adversary round 11 part A, issue 34 item 9).

Before: a grader that swallowed its cancellation held the cell (and ``harness run``) for ever
past ``time_limit_s`` (two SIGTERMs were needed; killed at 658 s in the attack), and one that
answered after swallowing it passed the cell although its limit had run out; a kind whose
``time_limit_s`` was changed after it was looked up (to ``inf``: never bounded; to ``"soon"``: a
``TypeError`` from asyncio) was used as it stood; a grader raising ``GeneratorExit`` was a
traceback, exit 1. The grading now runs as a task of its own, never waited for past its limit,
the limit is checked again at each verdict, and whatever a grader raises is its error cell."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import ClassVar, Literal

import pytest
from click.testing import CliRunner

import harness
from harness.cli import main
from harness.grading import Grade, GradeContext, Grader, agrade


def _result() -> harness.Result:
    return harness.run("say hi", provider="mock", provider_opts={"turns": [{"text": "hi"}]})


class SwallowsThenPasses(Grader):
    kind: Literal["test-swallows"] = "test-swallows"
    time_limit_s: ClassVar[float | None] = 0.3

    async def evaluate(self, result: harness.Result, context: GradeContext) -> Grade:
        with contextlib.suppress(asyncio.CancelledError):  # swallowed: it goes on
            await asyncio.sleep(30)
        return Grade.of(True, "passed after my limit")


class ChangesItsLimit(Grader):
    kind: Literal["test-changes-limit"] = "test-changes-limit"
    time_limit_s: ClassVar[float | None] = 0.3

    async def evaluate(self, result: harness.Result, context: GradeContext) -> Grade:
        return Grade.of(True, "ok")


class RaisesGeneratorExit(Grader):
    kind: Literal["test-generator-exit"] = "test-generator-exit"

    async def evaluate(self, result: harness.Result, context: GradeContext) -> Grade:
        raise GeneratorExit("mine")


def test_a_grader_swallowing_its_cancellation_is_not_waited_for() -> None:
    verdict = asyncio.run(agrade(SwallowsThenPasses(), _result()))
    assert verdict.error
    assert not verdict.passed  # before: passed, 30 s later, its limit long past
    assert "no verdict within its time limit of 0.3 s" in verdict.explanation


@pytest.mark.parametrize("limit", [float("inf"), float("nan"), "soon", -1.0])
def test_a_time_limit_changed_after_the_kind_was_looked_up_is_checked_again(
    limit: object,
) -> None:
    before = ChangesItsLimit.time_limit_s
    ChangesItsLimit.time_limit_s = limit  # type: ignore[assignment]
    try:
        verdict = asyncio.run(agrade(ChangesItsLimit(), _result()))
    finally:
        ChangesItsLimit.time_limit_s = before
    assert verdict.error, verdict.explanation  # before: inf and nan passed unbounded
    assert "time_limit_s must be a number of seconds above 0" in verdict.explanation
    assert repr(limit) in verdict.explanation


def test_a_grader_raising_generator_exit_is_an_error_grade() -> None:
    verdict = asyncio.run(agrade(RaisesGeneratorExit(), _result()))  # before: raised
    assert verdict.error
    assert verdict.explanation == "test-generator-exit grader error: GeneratorExit: mine"


PLUGIN = """\
import asyncio
from typing import ClassVar, Literal

from harness.grading import Grade, Grader


class Swallow(Grader):
    kind: Literal["swallow11:Swallow"] = "swallow11:Swallow"
    time_limit_s: ClassVar[float | None] = 1

    async def evaluate(self, result, context):
        while True:
            try:
                await asyncio.sleep(1000)
            except asyncio.CancelledError:
                pass
"""

SUITE = """\
suite: s
tasks:
  - {id: a, prompt: hi, expect: {kind: "swallow11:Swallow"}, mock: {turns: [{text: hi}]}}
  - {id: b, prompt: hi, expect: {kind: contains, value: hi}, mock: {turns: [{text: hi}]}}
"""


@pytest.mark.timeout(600)  # before: the run never ended (the test's own bound stops it)
def test_harness_run_with_a_grader_that_swallows_its_cancellation_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "swallow11.py").write_text(PLUGIN)
    (tmp_path / "s.yaml").write_text(SUITE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    args = ["run", "s.yaml", "--modes", "react", "--providers", "mock", "--db", "h.duckdb",
            "--no-progress"]  # fmt: skip
    done = CliRunner().invoke(main, args)
    out = " ".join(done.output.split())
    assert done.exit_code == 3, out
    assert "Traceback" not in out
    assert "2/2 cells, 1 passed, 0 failed, 1 errored" in out
    assert "no verdict within its time limit of 1 s" in out
