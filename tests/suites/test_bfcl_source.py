"""The bfcl task source and grader through the extension seam, run offline on the mock."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip(
    "bfcl_eval",
    reason="bfcl-eval is not installed (pip install --no-deps bfcl-eval==2026.3.23 mpmath)",
)
pytest.importorskip(
    "mpmath", reason="mpmath is not installed (pip install --no-deps bfcl-eval==2026.3.23 mpmath)"
)

import harness
from harness.grading import GradeContext, parse_grader
from harness.suites import load_suites
from harness.suites._bfcl_data import MISSED_FUNCTION_PROMPT
from harness.suites._suite import UserTurn

SOURCE = "harness.suites._bfcl_source:bfcl_source"


def _run(task: Any, turns: list[dict[str, Any]]) -> harness.Result:
    options = task.run_options()
    return harness.run(task.prompt, provider="mock", provider_opts={"turns": turns}, **options)


def _grade(task: Any, result: harness.Result) -> Any:
    return parse_grader(task.expect.model_dump()).evaluate(result, GradeContext())


def test_a_source_path_makes_tasks_with_bfcl_ids() -> None:
    (suite,) = load_suites([f"{SOURCE}:simple_python"])
    assert suite.name == "bfcl-simple_python"
    assert len(suite.tasks) == 397  # the last 3 entries are the few-shot examples
    task = suite.task("simple_python_1")
    assert task.tools == ["math_factorial"]
    assert task.expect.model_dump()["kind"] == "bfcl"
    (irrelevance,) = load_suites([f"{SOURCE}:irrelevance"])
    assert all(t.audit is not None and t.audit.allow for t in irrelevance.tasks)
    (relevance,) = load_suites([f"{SOURCE}:live_relevance"])
    assert all(t.audit is not None and t.audit.allow for t in relevance.tasks)
    assert all(t.audit is None for t in suite.tasks)


def test_miss_func_turns_add_the_held_out_tools() -> None:
    (suite,) = load_suites([f"{SOURCE}:multi_turn_miss_func"])
    task = suite.task("multi_turn_miss_func_0")
    assert task.max_steps_per_turn == 20
    assert task.turns is not None
    added = task.turns[3]
    assert isinstance(added, UserTurn)
    assert added.user == MISSED_FUNCTION_PROMPT
    assert added.add_tools == ["sort"]


def test_ground_truth_passes_and_wrong_calls_fail_with_bfcl_errors() -> None:
    (suite,) = load_suites([f"{SOURCE}:simple_python,multi_turn_base"])
    simple = suite.task("simple_python_0")
    assert simple.mock is not None
    assert _grade(simple, _run(simple, simple.mock.turns)).passed
    wrong: list[dict[str, Any]] = [
        {
            "tool_calls": [
                {"name": "calculate_triangle_area", "arguments": {"base": 1, "height": 5}}
            ]
        },
        {"text": "x"},
    ]
    grade = _grade(simple, _run(simple, wrong))
    assert not grade.passed
    assert "value_error" in grade.explanation
    multi = suite.task("multi_turn_base_0")
    assert multi.mock is not None
    assert multi.turns is not None
    result = _run(multi, multi.mock.turns)
    assert len(result.turns) == len(multi.turns)
    assert _grade(multi, result).passed
    lazy = [{"text": "I will not do that."} for _ in multi.turns]
    assert "multi_turn:empty_turn_model_response" in _grade(multi, _run(multi, lazy)).explanation


def test_each_run_gets_fresh_bfcl_instances() -> None:
    (suite,) = load_suites([f"{SOURCE}:multi_turn_base"])
    task = suite.task("multi_turn_base_0")
    assert task.mock is not None
    first = _run(task, task.mock.turns)
    second = _run(task, task.mock.turns)
    assert _grade(task, first).passed
    assert _grade(task, second).passed
    assert [t.steps for t in first.turns] == [t.steps for t in second.turns]


def test_yaml_source_takes_categories_and_id_globs(tmp_path: Any) -> None:
    path = tmp_path / "b.yaml"
    path.write_text(
        f"suite: bfcl-subset\nsource: {{kind: '{SOURCE}', categories: [simple_python, parallel], "
        "ids: ['simple_python_1?', 'parallel_0']}\n"
    )
    (suite,) = load_suites([str(path)])
    assert [t.id for t in suite.tasks] == [f"simple_python_1{i}" for i in range(10)] + [
        "parallel_0"
    ]


def test_a_bare_source_caps_every_request_at_the_leaderboard_setting(tmp_path: Any) -> None:
    """``bfcl:simple_python`` sends BFCL's leaderboard cap with every request (issue 35: the
    bare path sent none and a stopped run's server generated 7,454 tokens on); in a YAML suite
    the suite's own defaults decide (the built-in ones were recorded with theirs)."""
    from harness.suites._bfcl_source import LEADERBOARD_MAX_TOKENS

    (suite,) = load_suites([f"{SOURCE}:simple_python"])
    assert LEADERBOARD_MAX_TOKENS == 4096
    assert {t.run_options()["max_tokens"] for t in suite.tasks} == {LEADERBOARD_MAX_TOKENS}
    path = tmp_path / "b.yaml"
    path.write_text(
        f"suite: capped\ndefaults: {{max_tokens: 128}}\nsource: {{kind: '{SOURCE}', "
        "categories: [simple_python], ids: ['simple_python_1']}\n"
    )
    (capped,) = load_suites([str(path)])
    assert capped.tasks[0].run_options()["max_tokens"] == 128
