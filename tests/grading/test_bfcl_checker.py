"""The bfcl grader's core: BFCL's own checkers on the harness's calls, isolated and eval-safe."""

from __future__ import annotations

import decimal
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "bfcl_eval",
    reason="bfcl-eval is not installed (pip install --no-deps bfcl-eval==2026.3.23 mpmath)",
)
pytest.importorskip(
    "mpmath", reason="mpmath is not installed (pip install --no-deps bfcl-eval==2026.3.23 mpmath)"
)

from harness.grading._bfcl_calls import REJECTED_CALL, parse_call_string, render_call
from harness.grading._bfcl_checker import grade_ast, grade_multi_turn
from harness.suites import _bfcl_data as data

Turns = list[list[list[tuple[str, Any]]]]


def _ast_calls(e: data.BfclEntry) -> list[tuple[str, Any]]:
    (turn,) = data.ground_truth_calls(e)
    return [(c.name, c.arguments) for step in turn for c in step]


def _mt_turns(e: data.BfclEntry) -> Turns:
    return [[[(c.name, c.arguments) for c in s] for s in t] for t in data.ground_truth_calls(e)]


def _grade_mt(e: data.BfclEntry, turns: Turns) -> Any:
    names = [f["name"] for f in e.all_functions()]
    return grade_multi_turn(e.raw, names, e.ground_truth, turns)


@pytest.mark.slow  # the whole data set through the checker
def test_ground_truth_passes_every_ast_entry_but_the_four_unsatisfiable() -> None:
    failed = {}
    count = 0
    for category in data.AST_CATEGORIES:
        for e in data.load_category(category):
            count += 1
            verdict = grade_ast(e.category, e.functions, e.ground_truth, _ast_calls(e))
            if not verdict.passed:
                failed[e.id] = verdict.error_type
    assert count == 3491
    assert set(failed) == data.UNSATISFIABLE
    assert failed["live_multiple_862-181-3"] == "simple_function_checker:unexpected_param"


@pytest.mark.slow  # the whole data set through the checker
def test_ground_truth_passes_all_800_multi_turn_entries() -> None:
    entries = data.entries(data.MULTI_TURN_CATEGORIES)
    assert len(entries) == 800
    failed = [e.id for e in entries if not _grade_mt(e, _mt_turns(e)).passed]
    assert failed == []


def test_wrong_ast_answers_fail_with_bfcl_error_types() -> None:
    e = data.entry("simple_python_0")
    ((name, args),) = _ast_calls(e)
    wrong = grade_ast(e.category, e.functions, e.ground_truth, [(name, {**args, "base": 999})])
    assert (wrong.passed, wrong.error_type) == (False, "value_error:others")
    assert "BFCL value_error:others" in wrong.explanation
    twice = grade_ast(e.category, e.functions, e.ground_truth, [(name, args), (name, args)])
    assert twice.error_type == "simple_function_checker:wrong_count"
    none = grade_ast(e.category, e.functions, e.ground_truth, [])
    assert none.error_type == "ast_decoder:decoder_failed"
    irrelevant = data.load_category("irrelevance")[0]
    assert grade_ast("irrelevance", irrelevant.functions, None, []).passed
    called = grade_ast("irrelevance", irrelevant.functions, None, [("f", {})])
    assert called.error_type == "irrelevance_error:decoder_success"
    assert grade_ast("live_relevance", [], None, []).error_type == "relevance_error:decoder_failed"


def test_dotted_names_are_mapped_back_for_the_checker() -> None:
    e = next(e for e in data.load_category("simple_python") if "." in e.functions[0]["name"])
    calls = _ast_calls(e)
    assert "." not in calls[0][0]
    assert grade_ast(e.category, e.functions, e.ground_truth, calls).passed


def test_wrong_multi_turn_answers_fail_with_bfcl_error_types() -> None:
    e = data.entry("multi_turn_base_0")
    right = _mt_turns(e)
    empty_first = [[], *right[1:]]
    assert _grade_mt(e, empty_first).error_type == "multi_turn:empty_turn_model_response"
    assert _grade_mt(e, right[:-1]).error_type == "multi_turn:force_terminated"
    # the same calls, each given a wrong argument: the instances' state differs
    skewed = [
        [
            [(n, {k: f"{v}x" if isinstance(v, str) else v for k, v in a.items()}) for n, a in s]
            for s in t
        ]
        for t in right
    ]
    assert _grade_mt(e, skewed).error_type in {
        "multi_turn:instance_state_mismatch",
        "multi_turn:execution_response_mismatch",
    }
    names = [f["name"] for f in e.all_functions()]
    forced = grade_multi_turn(e.raw, names, e.ground_truth, right, force_terminated=True)
    assert forced.error_type == "multi_turn:force_terminated"


def test_grading_the_same_entry_twice_gives_the_same_verdict() -> None:
    e = data.entry("multi_turn_base_3")
    first = _grade_mt(e, _mt_turns(e))
    second = _grade_mt(e, _mt_turns(e))
    assert first.passed
    assert second.passed
    wrong: Turns = [[[]] for _ in e.ground_truth]
    assert _grade_mt(e, wrong) == _grade_mt(e, wrong)


def test_math_api_precision_is_restored_after_grading() -> None:
    import mpmath

    e = next(e for e in data.load_category("multi_turn_base") if "MathAPI" in e.involved_classes)
    before = (mpmath.mp.prec, decimal.getcontext().prec)
    assert _grade_mt(e, _mt_turns(e)).passed
    assert (mpmath.mp.prec, decimal.getcontext().prec) == before


def test_an_injected_tool_name_never_runs(tmp_path: Path) -> None:
    target = tmp_path / "pwned"
    e = data.entry("multi_turn_base_0")
    bad_name = "__import__('os').system"
    no_calls: Turns = [[[]] for _ in e.ground_truth[1:]]
    attack: Turns = [
        [
            [(bad_name, {"command": f"touch {target}"})],
            [("ls", {"a": f"__import__('os').system('touch {target}')"})],
        ],
        *no_calls,
    ]
    verdict = _grade_mt(e, attack)
    assert not verdict.passed
    key_attack: Turns = [
        [[("cd", {f"folder=__import__('os').system('touch {target}'),x": 1})]],
        *attack[1:],
    ]
    assert not _grade_mt(e, key_attack).passed
    assert not target.exists()


def test_render_call_matches_bfcl_and_refuses_unsafe_calls() -> None:
    allowed = {"cd", "math.factorial"}
    assert (
        render_call("cd", {"folder": "doc's", "n": [1, 2.5]}, allowed)
        == 'cd(folder="doc\'s",n=[1, 2.5])'
    )
    assert render_call("math.factorial", {}, allowed) == "math.factorial()"
    assert render_call("__import__('os').system", {"c": "x"}, allowed) == REJECTED_CALL
    assert render_call("open", {"file": "x"}, allowed) == REJECTED_CALL  # not the entry's
    assert render_call("cd", {"a b": 1}, allowed) == REJECTED_CALL
    assert render_call("cd", {"lambda": 1}, allowed) == REJECTED_CALL
    assert render_call("cd", {"x": float("nan")}, allowed) == REJECTED_CALL
    assert render_call("cd", {"x": {1: 2}}, allowed) == REJECTED_CALL
    assert render_call("cd", "folder='x'", allowed) == REJECTED_CALL


def test_parse_call_string_reads_positional_arguments_by_the_doc() -> None:
    docs = [{"name": "sort", "parameters": {"properties": {"file_name": {}, "reverse": {}}}}]
    assert parse_call_string("sort('a.pdf', reverse=True)", docs) == (
        "sort",
        {"file_name": "a.pdf", "reverse": True},
    )
    with pytest.raises(ValueError, match="not a call of a plain name"):
        parse_call_string("__import__('os').system('x')", docs)
    with pytest.raises(ValueError, match="malformed node"):
        parse_call_string("sort(open('x'))", docs)


def test_explanations_are_json_safe_text() -> None:
    e = data.entry("multi_turn_base_1")
    verdict = _grade_mt(e, [[[]] for _ in e.ground_truth])
    assert json.loads(json.dumps(verdict.explanation)) == verdict.explanation
    assert verdict.explanation.startswith("BFCL multi_turn:")
