"""The BFCL source's data: loading, tools equal to BFCL's convert_to_tool, mock scripts, shots."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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

from harness.providers._mock import MockProvider
from harness.providers._profiles import Example
from harness.suites import _bfcl_data as data

COUNTS = {
    "simple_python": 400, "multiple": 200, "parallel": 200, "parallel_multiple": 200,
    "irrelevance": 240, "live_simple": 258, "live_multiple": 1053, "live_parallel": 16,
    "live_parallel_multiple": 24, "live_irrelevance": 884, "live_relevance": 16,
    "multi_turn_base": 200, "multi_turn_miss_func": 200, "multi_turn_miss_param": 200,
    "multi_turn_long_context": 200,
}  # fmt: skip
ROOT = Path(__file__).resolve().parents[2]


def test_fifteen_categories_with_bfcl_counts() -> None:
    assert tuple(COUNTS) == data.CATEGORIES
    assert {c: len(data.load_category(c)) for c in data.CATEGORIES} == COUNTS
    e = data.entry("multi_turn_miss_func_0")
    assert e.kind == "multi_turn"
    assert [d["name"] for d in e.missed[3]] == ["sort"]
    assert "sort" not in {d["name"] for d in e.functions}
    assert not e.missed[3][0]["description"].endswith(data.PYTHON_HINT)  # as BFCL: no hint
    assert data.entry("simple_python_0").functions[0]["description"].endswith(data.PYTHON_HINT)


@pytest.mark.slow
def test_loading_every_category_loads_every_entry() -> None:
    """How long it takes is measured by benchmarks/bfcl_speed.py (``load``), not here."""
    code = "from harness.suites import _bfcl_data as d\nprint(len(d.entries()))\n"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )  # a fresh process: nothing loaded before
    assert int(out.stdout) == sum(COUNTS.values())


@pytest.mark.slow
def test_tools_equal_bfcl_convert_to_tool_on_every_entry(tmp_path: Path) -> None:
    env = {**os.environ, "BFCL_PROJECT_ROOT": str(tmp_path)}  # bfcl_eval.utils writes there
    out = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("_bfcl_reference.py")), *data.CATEGORIES],
        capture_output=True, text=True, check=True, cwd=ROOT, env=env, timeout=120,
    )  # fmt: skip
    reference = json.loads(out.stdout)
    assert len(reference) == sum(COUNTS.values())
    mismatched = []
    dotted = 0
    for e in data.entries():
        ours = [data.convert_function(d) for d in e.functions]
        missed = {str(t): [data.convert_function(d) for d in docs] for t, docs in e.missed.items()}
        dotted += sum("." in d["name"] for d in e.functions)
        if ours != reference[e.id]["tools"] or missed != reference[e.id]["missed"]:
            mismatched.append(e.id)
    assert mismatched == []
    assert dotted == 2084


def test_tool_spec_is_the_converted_function_with_the_response_in_the_description() -> None:
    e = data.entry("multi_turn_base_0")
    doc = next(d for d in e.functions if "response" in d)
    spec = data.tool_spec(doc)
    assert set(spec) == {"name", "description", "parameters"}
    assert spec["parameters"]["type"] == "object"
    assert "The response field has the following schema: " in spec["description"]
    math_doc = next(d for d in data.entry("simple_python_1").functions)
    assert data.tool_spec(math_doc)["name"] == "math_factorial"


def test_mock_scripts_are_valid_and_follow_the_ground_truth() -> None:
    for e in data.entries():
        MockProvider(turns=data.mock_script(e))  # validates every turn
    simple = data.mock_script(data.entry("simple_python_0"))
    assert simple == [
        {
            "tool_calls": [
                {"name": "calculate_triangle_area", "arguments": {"base": 10, "height": 5}}
            ]
        },
        {"text": "Done."},
    ]
    assert [list(t) for t in data.mock_script(data.load_category("irrelevance")[0])] == [["text"]]
    mt = data.entry("multi_turn_base_0")
    script = data.mock_script(mt)
    assert sum("text" in t for t in script) == len(mt.ground_truth)
    assert script[0] == {"tool_calls": [{"name": "cd", "arguments": {"folder": "document"}}]}
    relevance = data.mock_script(data.load_category("live_relevance")[0])
    assert len(relevance[0]["tool_calls"]) == 1


def test_multi_turn_ground_truth_packs_long_turns_into_twenty_steps() -> None:
    for e in data.entries(data.MULTI_TURN_CATEGORIES):
        for turn, calls in zip(data.ground_truth_calls(e), e.ground_truth, strict=True):
            assert len(turn) <= 20
            assert sum(len(step) for step in turn) == len(calls)


def test_few_shot_is_deterministic_and_excluded_from_scoring() -> None:
    shots = data.few_shot("simple_python")
    assert [s.entry_id for s in shots] == [
        "simple_python_397",
        "simple_python_398",
        "simple_python_399",
    ]
    assert shots == data.few_shot("simple_python")
    scored = {e.id for e in data.scored_entries("simple_python")}
    assert len(scored) == 397
    assert not scored & {s.entry_id for s in shots}
    first = shots[0].messages
    assert first[0]["role"] == "user"
    assert first[1]["tool_calls"]
    assert first[-1] == {"role": "assistant", "content": "Done."}
    assert {t["name"] for t in shots[0].tools} >= {c["name"] for c in first[1]["tool_calls"]}
    example = Example.model_validate(data.shot_example(shots[0]))
    assert example.tool_names() == ()  # sent whatever tools the request offers
    assert shots[0].tools[0]["name"] in example.messages[0]["content"]
    for category in (*data.IRRELEVANCE_CATEGORIES, "live_relevance", *data.MULTI_TURN_CATEGORIES):
        assert data.few_shot(category) == []
        assert len(data.scored_entries(category)) == COUNTS[category]


def test_irrelevance_categories_are_flagged() -> None:
    assert data.IRRELEVANCE_CATEGORIES == ("irrelevance", "live_irrelevance")
    kinds = {data.load_category(c)[0].kind for c in data.IRRELEVANCE_CATEGORIES}
    assert kinds == {"irrelevance"}
    assert data.load_category("live_relevance")[0].kind == "relevance"


@pytest.mark.slow
def test_a_missing_bfcl_eval_names_the_install_command() -> None:
    code = (
        "import sys; sys.modules['bfcl_eval'] = None\n"
        "from harness.suites import _bfcl_data as d\n"
        "try:\n    d.load_category('simple_python')\n"
        "except Exception as e:\n    print(type(e).__name__, e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.startswith("ConfigError ")
    assert "pip install --no-deps bfcl-eval==2026.3.23 mpmath" in out.stdout


def test_unknown_category_and_entry_are_config_errors() -> None:
    from harness.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown BFCL category 'simple'"):
        data.load_category("simple")
    with pytest.raises(ConfigError, match="no BFCL entry"):
        data.entry("simple_python_9999")


def _question(e: data.BfclEntry) -> list[str]:
    return [" ".join(m["content"].split()).lower() for t in e.question for m in t
            if m["role"] != "system"]  # fmt: skip


def _answer(e: data.BfclEntry) -> Any:
    def accepted(values: Any) -> Any:
        return sorted(map(repr, values)) if isinstance(values, list) else repr(values)

    return sorted(
        repr((name, sorted((p, accepted(v)) for p, v in params.items())))
        for item in e.ground_truth or []
        for name, params in item.items()
    )


def test_no_scored_entry_repeats_a_shot_in_any_category() -> None:
    """Whole-category runs used to score multiple_111 (the shot multiple_198 again: question
    and answer), multiple_110 (multiple_197's question) and live_parallel_7-3-1 (the shot
    live_parallel_14-10-0)."""
    checked = 0
    for category in data.CATEGORIES:
        shots = [data.entry(s.entry_id) for s in data.few_shot(category)]
        for e in data.scored_entries(category):
            for shot in shots:
                assert _question(e) != _question(shot), (e.id, shot.id)
                if shot.ground_truth is not None:
                    assert _answer(e) != _answer(shot), (e.id, shot.id)
                checked += 1
    assert checked > 3000
    dropped = data.shot_duplicates("multiple")
    assert dropped == {
        "multiple_110": "multiple_197 (question and answer)",
        "multiple_111": "multiple_198 (question and answer)",
    }
    assert data.shot_duplicates("live_parallel") == {
        "live_parallel_1-0-1": "live_parallel_13-9-0 (answer); live_parallel_14-10-0 (answer)",
        "live_parallel_2-0-2": "live_parallel_13-9-0 (answer); live_parallel_14-10-0 (answer)",
        "live_parallel_7-3-1": "live_parallel_13-9-0 (answer); "
        "live_parallel_14-10-0 (question and answer)",
    }
    assert len(data.scored_entries("multiple")) == COUNTS["multiple"] - 3 - 2
    assert not {"multiple_110", "multiple_111"} & {e.id for e in data.scored_entries("multiple")}
