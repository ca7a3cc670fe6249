"""A plug-in grader's ``Grade`` whose ``passed`` is a string (issue 34, adversary round 21,
part A).

``Grade.__post_init__`` checks a plug-in's score and cost, and kept ``passed`` as
``bool(passed)``: ``Grade("false", 0.0, ...)`` (a verdict read from a model's JSON, quoted as
small models quote it: round 16 fixed the judge's own reading of it) was stored **passed**
(the real CLI: ``2/2 cells, 2 passed``). A ``str`` (or ``bytes``) ``passed`` is refused now: the
grader's error, an error cell."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.grading import Grade
from tests.suite_files import invoke_in

_GRADER = """
from typing import Literal
from harness.grading import Grade, Grader

class Quoted(Grader):
    kind: Literal["quoted21:Quoted"] = "quoted21:Quoted"

    async def evaluate(self, result, context):
        return Grade("false", 0.0, "the model said no")
"""
_SUITE = """
suite: s
tasks:
  - {id: a, prompt: hi, expect: {kind: "quoted21:Quoted"}, mock: {turns: [{text: d}]}}
"""


@pytest.mark.parametrize("passed", ["false", "true", "", b"false"])
def test_a_passed_that_is_text_is_refused(passed: object) -> None:
    with pytest.raises(ValueError, match="passed must be True or False"):
        Grade(passed, 0.0, "x")  # type: ignore[arg-type]


def test_a_plug_in_graders_quoted_false_is_its_error_not_a_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {"quoted21.py": _GRADER, "s.yaml": _SUITE}
    args = ["run", "s.yaml", "--providers", "mock", "--modes", "react", "--db", "h.duckdb"]
    out = invoke_in(tmp_path, monkeypatch, files, args)
    # on 84cec7a: "1/1 cells, 1 passed", exit 0
    assert out.exit_code == 3, out.output
    assert "passed must be True or False, got 'false'" in out.output
