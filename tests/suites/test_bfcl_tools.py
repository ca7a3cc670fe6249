"""BFCL's classes as per-cell harness tools: fresh state per cell, BFCL's result text."""

from __future__ import annotations

import decimal
import re
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

from harness.grading._bfcl_calls import render_call
from harness.grading._bfcl_env import bfcl_module
from harness.suites import _bfcl_data as data
from harness.suites._bfcl_tools import AST_RESULT, build_tools
from harness.tools._base import Tool, ToolContext

UTILS = "bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils"


def _ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=None, session_id="s")  # type: ignore[arg-type]


def _bfcl_results(e: data.BfclEntry, name: str) -> list[str]:
    """BFCL's own executor on the ground truth, turn by turn (then its globals are purged)."""
    utils = bfcl_module(UTILS)
    out: list[str] = []
    try:
        for turn in e.ground_truth:
            results, _ = utils.execute_multi_turn_func_call(
                turn, e.initial_config, e.involved_classes, name, e.id,
                long_context="long_context" in e.category,
            )  # fmt: skip
            out.extend(results)
    finally:
        prefix = re.sub(r"[-./:]", "_", name) + "_"
        for key in [k for k in vars(utils) if k.startswith(prefix)]:
            del vars(utils)[key]
    return out


@pytest.mark.parametrize("category", ["multi_turn_base", "multi_turn_long_context"])
async def test_tools_give_bfcl_executor_results(category: str, tmp_path: Path) -> None:
    for i, e in enumerate(data.load_category(category)[:40]):
        toolset = build_tools(e)
        tools = {t.name: t for t in toolset.tools}
        tools.update({t.name: t for added in toolset.added.values() for t in added})
        ours = []
        for turn in data.ground_truth_calls(e):
            for step in turn:
                for call in step:
                    ours.append(await tools[call.name].run(call.arguments, _ctx(tmp_path)))
        assert ours == _bfcl_results(e, f"tools-test-{category}-{i}"), e.id


async def test_each_cell_gets_fresh_instances(tmp_path: Path) -> None:
    e = data.entry("multi_turn_base_0")
    first, second = build_tools(e), build_tools(e)
    cd = {t.name: t for t in first.tools}["cd"]
    pwd = {t.name: t for t in first.tools}["pwd"]
    assert "document" in await cd.run({"folder": "document"}, _ctx(tmp_path))
    moved = await pwd.run({}, _ctx(tmp_path))
    fresh = await {t.name: t for t in second.tools}["pwd"].run({}, _ctx(tmp_path))
    assert moved != fresh
    assert first.state is not None
    assert second.state is not None
    assert first.state.pickled != second.state.pickled  # each cell's own instances
    assert "GorillaFileSystem" in first.state.instances()


async def test_tools_are_harness_tools_and_errors_are_bfcl_text(tmp_path: Path) -> None:
    e = data.entry("multi_turn_base_0")
    toolset = build_tools(e)
    assert all(isinstance(t, Tool) for t in toolset.tools)
    cd = {t.name: t for t in toolset.tools}["cd"]
    assert cd.parameters["type"] == "object"
    out = await cd.run({"nope": 1}, _ctx(tmp_path))
    assert out.startswith("Error during execution: ")
    assert toolset.state is not None
    injected = await toolset.state.call(
        "__import__('os').system", {"command": f"touch {tmp_path / 'x'}"}
    )
    assert injected.startswith("Error during execution: name ")
    assert not (tmp_path / "x").exists()


async def test_math_api_precision_is_restored(tmp_path: Path) -> None:
    import mpmath

    e = next(e for e in data.load_category("multi_turn_base") if "MathAPI" in e.involved_classes)
    tools = {t.name: t for t in build_tools(e).tools}
    before = (mpmath.mp.prec, decimal.getcontext().prec)
    result = await tools["square_root"].run({"number": 2, "precision": 40}, _ctx(tmp_path))
    assert "1.41421356237309504880168872420969807857" in result
    assert (mpmath.mp.prec, decimal.getcontext().prec) == before


async def test_ast_tools_execute_nothing(tmp_path: Path) -> None:
    e = data.entry("simple_python_1")
    toolset = build_tools(e)
    assert toolset.state is None
    (tool,) = toolset.tools
    assert tool.name == "math_factorial"
    assert tool.bfcl_name == "math.factorial"
    assert await tool.run({"number": 5}, _ctx(tmp_path)) == AST_RESULT


def test_miss_func_tools_are_added_by_turn() -> None:
    e = data.entry("multi_turn_miss_func_0")
    toolset = build_tools(e)
    assert [t.name for t in toolset.added[3]] == ["sort"]
    assert "sort" not in {t.name for t in toolset.tools}
    assert toolset.added[3][0]._state is toolset.state


def test_rendered_ground_truth_is_what_bfcl_would_build() -> None:
    # BFCL's FC decoder renders {name: args} as name(k=repr(v),...): so do we
    e = data.entry("multi_turn_base_0")
    allowed = {f["name"] for f in e.all_functions()}
    call = data.ground_truth_calls(e)[0][0][0]
    rendered: Any = render_call(call.name, call.arguments, allowed)
    assert rendered == "cd(folder='document')"
