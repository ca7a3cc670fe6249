"""`harness traces show FILE [--run ID]`: the span tree in the terminal."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import harness
from harness import tool
from harness.cli import main
from harness.telemetry import configure_tracing
from harness.telemetry._show import MAX_TREES


@tool
def lookup(k: int = 0) -> str:
    """Look something up."""
    return f"value {k}"


def _runs(path: Path, n: int = 2) -> list[harness.Result]:
    with configure_tracing(file=path) as tracing:
        return [
            harness.run(
                "q",
                provider="mock",
                tools=[lookup],
                provider_opts={
                    "turns": [
                        {"tool_calls": [{"name": "lookup", "arguments": {"k": 1}}]},
                        {
                            "text": "done",
                            "usage": {"input_tokens": 50, "output_tokens": 7},
                            "cost_usd": 0.0025,
                        },
                    ]
                },
                tracer_provider=tracing.provider,
            )
            for _ in range(n)
        ]


def _show(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["traces", "show", *args], terminal_width=200)
    return result.exit_code, result.output


def test_show_prints_the_tree_with_durations_tokens_and_cost(tmp_path: Path) -> None:
    path = tmp_path / "spans.jsonl"
    (r,) = _runs(path, 1)
    code, out = _show(str(path))
    assert code == 0, out
    lines = out.splitlines()
    assert f"trace {r.trace_id}" in lines[0]
    assert "6 spans" in lines[0]
    tree = "\n".join(lines)
    for name in ("invoke_agent react", "iteration 0", "iteration 1", "chat mock-model",
                 "execute_tool lookup"):  # fmt: skip
        assert name in tree
    assert "50→7 tok" in tree
    assert "$0.0025" in tree
    assert " ms" in tree
    assert "stop" in tree
    # The tree is nested: the tool is deeper than its iteration, which is deeper than the root.
    depth = {name: next(i for i, line in enumerate(lines) if name in line) for name in
             ("invoke_agent", "iteration 0", "execute_tool")}  # fmt: skip
    indent = {k: len(lines[v]) - len(lines[v].lstrip(" │├└─")) for k, v in depth.items()}
    assert indent["invoke_agent"] < indent["iteration 0"] < indent["execute_tool"]


def test_show_one_run_by_trace_id_prefix_or_session_id(tmp_path: Path) -> None:
    path = tmp_path / "spans.jsonl"
    a, b = _runs(path, 2)
    assert a.trace_id is not None
    assert a.session_id is not None
    code, out = _show(str(path), "--run", a.trace_id[:10])
    assert code == 0
    assert a.trace_id in out
    assert str(b.trace_id) not in out
    code, out = _show(str(path), "--run", a.session_id)
    assert code == 0
    assert a.trace_id in out
    code, out = _show(str(path), "--run", "f" * 32)
    assert code == 2  # bad input, not the gate's regression code
    assert "no run" in out


def test_many_runs_get_a_summary_table(tmp_path: Path) -> None:
    path = tmp_path / "spans.jsonl"
    runs = _runs(path, MAX_TREES + 1)
    code, out = _show(str(path))
    assert code == 0
    assert f"{MAX_TREES + 1} runs" in out
    assert all(str(r.trace_id) in out for r in runs)
    assert "execute_tool" not in out


@pytest.mark.parametrize("content", ["", "not json\n"])
def test_empty_or_foreign_files(tmp_path: Path, content: str) -> None:
    path = tmp_path / "spans.jsonl"
    path.write_text(content)
    code, out = _show(str(path))
    assert code == 2  # bad input, not the gate's regression code
    assert "no spans" in out


def test_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    code, out = _show(str(tmp_path / "nope.jsonl"))
    assert code == 2
    assert "does not exist" in out
