"""Every grader kind, passing and failing, on real Results from harness.arun on the mock
provider."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path
from typing import Any

import pytest

import harness
from harness.core import FinishReason, Result
from harness.grading import PASS_THRESHOLD, Grade, Grader, agrade, parse_grader
from harness.grading._text import FileContainsGrader


def call(name: str, /, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


async def run(*turns: dict[str, Any], cwd: Path | None = None, **options: Any) -> Result:
    options.setdefault("tools", ["calculator", "write_file", "finish"])
    return await harness.arun(
        "task",
        provider="mock",
        provider_opts={"turns": list(turns)},
        cwd=cwd,
        max_iterations=6,
        **options,
    )


def g(**fields: Any) -> Grader:
    return parse_grader(fields)


async def text_result(text: str) -> Result:
    return await run(call("calculator", expression="17*23"), {"text": text})


async def submitted(deliverable: Any, text: str = "") -> Result:
    turn = call("finish", deliverable=deliverable)
    if text:
        turn["text"] = text
    result = await run(turn)
    assert result.finish_reason is FinishReason.SUBMITTED
    return result


async def test_equals() -> None:
    result = await text_result("  395\n")
    assert await agrade(g(kind="equals", value="395"), result) == Grade(
        True, 1.0, "text equals '395'"
    )
    assert (await agrade(g(kind="equals", value=["394", "395"]), result)).passed
    failed = await agrade(g(kind="equals", value="394"), result)
    assert failed == Grade(False, 0.0, "expected text '394', got '395'")
    assert not (await agrade(g(kind="equals", value="39"), result)).passed


async def test_equals_case_sensitivity() -> None:
    result = await text_result("Paris")
    assert (
        await agrade(g(kind="equals", value="paris"), result)
    ).passed  # default: case-insensitive
    strict = await agrade(g(kind="equals", value="paris", case_sensitive=True), result)
    assert strict == Grade(False, 0.0, "expected text 'paris', got 'Paris'")


async def test_contains() -> None:
    result = await text_result("The answer is 394.")
    failed = await agrade(g(kind="contains", value="395"), result)
    assert failed == Grade(False, 0.0, "expected '395' in text, got 'The answer is 394.'")
    assert (await agrade(g(kind="contains", value=["395", "394"]), result)).explanation == (
        "found '394' in text"
    )
    assert (await agrade(g(kind="contains", value="ANSWER"), result)).passed
    assert not (
        await agrade(g(kind="contains", value="ANSWER", case_sensitive=True), result)
    ).passed


async def test_long_text_is_shown_by_its_end() -> None:
    result = await text_result("word " * 40 + "final: 7")
    explanation = (await agrade(g(kind="contains", value="8"), result)).explanation
    assert explanation.startswith("expected '8' in text, got '…")
    assert explanation.endswith("word final: 7'")
    assert len(explanation) < 100


async def test_regex() -> None:
    result = await text_result("Result: 36.0\n")
    assert await agrade(g(kind="regex", value=r"\b36(\.0+)?\b"), result) == Grade(
        True, 1.0, r"/\b36(\.0+)?\b/ matched '36.0'"
    )
    failed = await agrade(g(kind="regex", value=r"^\s*36\s*$"), result)
    assert failed == Grade(False, 0.0, r"expected text matching /^\s*36\s*$/, got 'Result: 36.0\n'")
    assert (await agrade(g(kind="regex", value="result"), result)).passed
    assert not (await agrade(g(kind="regex", value="result", case_sensitive=True), result)).passed


async def test_target_defaults_to_the_deliverable_when_submitted() -> None:
    result = await submitted("65536", text="I will submit now")
    assert (await agrade(g(kind="equals", value="65536"), result)).explanation == (
        "deliverable equals '65536'"
    )
    on_text = await agrade(g(kind="equals", value="65536", target="text"), result)
    assert on_text == Grade(False, 0.0, "expected text '65536', got 'I will submit now'")
    structured = await submitted({"b": 2, "a": [1, "x"]})
    assert (await agrade(g(kind="contains", value='"a":[1,"x"]'), structured)).passed


async def test_missing_target() -> None:
    stopped = await text_result("no submission")
    missing = await agrade(g(kind="equals", value="x", target="deliverable"), stopped)
    assert missing == Grade(False, 0.0, "no deliverable (run ended with stop)")
    silent = await run(call("finish"))  # submitted, but nothing in it and no text
    assert await agrade(g(kind="contains", value="x"), silent) == Grade(
        False, 0.0, "no text (run ended with submitted)"
    )


OBJECT_SCHEMA = {
    "type": "object",
    "required": ["name", "age"],
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
}


async def test_json_schema_on_a_deliverable() -> None:
    good = await submitted({"name": "Maria", "age": 34})
    assert await agrade(g(kind="json_schema", schema=OBJECT_SCHEMA), good) == Grade(
        True, 1.0, "deliverable matches the schema"
    )
    bad = await submitted({"name": "Maria", "age": "34"})
    assert await agrade(g(kind="json_schema", schema=OBJECT_SCHEMA), bad) == Grade(
        False, 0.0, "deliverable violates the schema at $.age: '34' is not of type 'integer'"
    )
    as_text = await submitted('{"name": "Kim", "age": 29}')  # a JSON string deliverable
    assert (await agrade(g(kind="json_schema", schema=OBJECT_SCHEMA), as_text)).passed


async def test_json_schema_on_text_whole_or_fenced() -> None:
    schema = g(kind="json_schema", schema={"type": "array", "items": {"type": "integer"}})
    assert (await agrade(schema, await text_result("[1, 2, 3]"))).passed
    fenced = await text_result('Here you go:\n```json\n[1, 2, "x"]\n```\nanything else?')
    assert await agrade(schema, fenced) == Grade(
        False, 0.0, "text violates the schema at $[2]: 'x' is not of type 'integer'"
    )
    assert (await agrade(schema, await text_result("Sure!\n```\n[4, 5]\n```"))).passed
    prose = await agrade(schema, await text_result("one, two, three"))
    assert not prose.passed
    assert prose.explanation.startswith("text is not JSON (Expecting value: line 1 column 1")
    assert prose.explanation.endswith("'one, two, three'")


async def test_json_schema_required_field() -> None:
    result = await submitted({"name": "Maria"})
    assert (await agrade(g(kind="json_schema", schema=OBJECT_SCHEMA), result)).explanation == (
        "deliverable violates the schema at $: 'age' is a required property"
    )


async def test_file_contains(tmp_path: Path) -> None:
    result = await run(
        call("write_file", path="out/hello.txt", content="Hello, world!\n"),
        {"text": "done"},
        cwd=tmp_path,
    )
    grader = g(kind="file_contains", path="out/hello.txt", value="hello, WORLD")
    assert await agrade(grader, result, tmp_path) == Grade(
        True, 1.0, "found 'hello, WORLD' in file out/hello.txt"
    )
    wrong = g(kind="file_contains", path="out/hello.txt", value="Goodbye", case_sensitive=True)
    assert await agrade(wrong, result, tmp_path) == Grade(
        False, 0.0, r"expected 'Goodbye' in file out/hello.txt, got 'Hello, world!\n'"
    )


async def test_file_contains_missing_file_and_no_workspace(tmp_path: Path) -> None:
    result = await text_result("I did not write anything")
    grader = g(kind="file_contains", path="hello.txt", value="Hello")
    assert await agrade(grader, result, tmp_path) == Grade(
        False, 0.0, "file hello.txt was not found in the workspace after the run"
    )
    (tmp_path / "hello.txt").mkdir()
    assert "is a directory" in (await agrade(grader, result, tmp_path)).explanation
    assert await agrade(grader, result, None) == Grade(
        False, 0.0, "no workspace to read hello.txt from (the runner gave none)"
    )


async def test_file_contains_refuses_paths_outside_the_workspace(tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("top secret")
    ws = tmp_path / "ws"
    ws.mkdir()
    os.symlink(outside, ws / "link.txt")
    result = await text_result("x")
    via_link = await agrade(g(kind="file_contains", path="link.txt", value="secret"), result, ws)
    assert via_link == Grade(False, 0.0, "refused: 'link.txt' is outside the workspace")
    # Suites cannot say ../ (checked at load); a grader built in code is refused at grading.
    dotdot = FileContainsGrader.model_construct(
        kind="file_contains", path="../secret.txt", value=["top"]
    )
    assert (await agrade(dotdot, result, ws)).explanation == (
        "refused: '../secret.txt' is outside the workspace"
    )


async def test_finish_reason() -> None:
    stuck = await run(call("calculator", expression="fact(3)"), tools=["calculator"])
    # the script is exhausted after one call -> error_during_execution; use repeat_last instead
    looping = await harness.arun(
        "task",
        provider="mock",
        tools=["calculator"],
        provider_opts={
            "turns": [call("calculator", expression="fact(3)")],
            "when_exhausted": "repeat_last",
        },
        max_iterations=8,
    )
    assert looping.finish_reason is FinishReason.ERROR_CONSECUTIVE_MISTAKES
    grader = g(kind="finish_reason", value=["error_consecutive_mistakes", "error_no_progress"])
    assert await agrade(grader, looping) == Grade(
        True, 1.0, "finish_reason error_consecutive_mistakes"
    )
    assert await agrade(grader, stuck) == Grade(
        False,
        0.0,
        "finish_reason error_during_execution, expected one of error_consecutive_mistakes, "
        "error_no_progress",
    )
    assert (await agrade(g(kind="finish_reason", value="stop"), await text_result("x"))).passed


GRADER_MODULE = """
from harness.grading import Grade

def is_395(result, workspace):
    return (result.text or "").strip() == "395"

def half(result, workspace):
    return 0.5

def low(result, workspace):
    return 0.25

def with_reason(result, workspace):
    return False, "the answer was off by one"

def graded(result, workspace):
    return Grade(True, 0.75, "custom grade")

def workspace_seen(result, workspace):
    return (workspace / "marker.txt").read_text() == "yes"

def boom(result, workspace):
    raise RuntimeError("grader bug")

def weird(result, workspace):
    return "maybe"

def too_big(result, workspace):
    return 1.5

async def later(result, workspace):
    return True

NOT_CALLABLE = 3
"""


@pytest.fixture
def grader_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "suite_checks_mod.py").write_text(textwrap.dedent(GRADER_MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    return "suite_checks_mod"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("function", "expected"),
    [
        ("is_395", Grade(True, 1.0, "{m}:is_395: passed")),
        ("half", Grade(True, 0.5, "{m}:half: score 0.50")),
        ("low", Grade(False, 0.25, "{m}:low: score 0.25")),
        ("with_reason", Grade(False, 0.0, "the answer was off by one")),
        ("graded", Grade(True, 0.75, "custom grade")),
        ("boom", Grade(False, 0.0, "grader {m}:boom raised RuntimeError: grader bug")),
        (
            "weird",
            Grade(
                False,
                0.0,
                "grader {m}:weird returned 'maybe'; expected a bool, a score in [0, 1], a Grade "
                "or (bool, explanation)",
            ),
        ),
        ("too_big", Grade(False, 0.0, "")),
        (
            "later",
            Grade(
                False, 0.0, "grader {m}:later returned an awaitable; use a plain (sync) function"
            ),
        ),
        ("NOT_CALLABLE", Grade(False, 0.0, "grader {m}:NOT_CALLABLE is not callable (int)")),
    ],
)
async def test_python_grader(grader_module: str, function: str, expected: Grade) -> None:
    result = await text_result("395")
    got = await agrade(g(kind="python", function=f"{grader_module}:{function}"), result, None)
    assert (got.passed, got.score) == (expected.passed, expected.score)
    # A grader that gives no verdict (raises, returns garbage) is an error, not a failure.
    assert got.error == (function in {"boom", "weird", "too_big", "later", "NOT_CALLABLE"})
    if expected.explanation:
        assert got.explanation == expected.explanation.format(m=grader_module)
    assert PASS_THRESHOLD == 0.5


@pytest.mark.slow
async def test_python_grader_gets_the_workspace(grader_module: str, tmp_path: Path) -> None:
    result = await run(call("write_file", path="marker.txt", content="yes"), {"text": "ok"},
                       cwd=tmp_path)  # fmt: skip
    grader = g(kind="python", function=f"{grader_module}:workspace_seen")
    assert (await agrade(grader, result, tmp_path)).passed


@pytest.mark.slow
async def test_python_grader_import_errors(grader_module: str) -> None:
    result = await text_result("395")
    missing_module = await agrade(g(kind="python", function="no_such_module_xyz:check"), result)
    assert missing_module == Grade(
        False,
        0.0,
        "cannot import grader no_such_module_xyz:check: ModuleNotFoundError: "
        "No module named 'no_such_module_xyz'",
        error=True,  # the cell cannot be scored: an error cell, not a failed one
    )
    missing_attr = await agrade(g(kind="python", function=f"{grader_module}:nope"), result)
    assert not missing_attr.passed
    assert missing_attr.error
    assert missing_attr.explanation.startswith(
        f"cannot import grader {grader_module}:nope: AttributeError"
    )


def test_grade_checks_its_fields() -> None:
    with pytest.raises(ValueError, match="score must be a number in"):
        Grade(True, 1.5, "x")
    assert Grade(True, 1, "two\nlines   here").explanation == "two lines here"
    assert Grade.of(False, "nope") == Grade(False, 0.0, "nope")


async def test_file_contains_refuses_a_fifo_without_blocking(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    os.mkfifo(ws / "out.txt")  # a model's shell could leave one; opening it would block
    result = await text_result("x")
    verdict = await agrade(g(kind="file_contains", path="out.txt", value="x"), result, ws)
    assert not verdict.passed
    assert "not a regular file (a FIFO)" in verdict.explanation
