"""`harness traces show` prints a model's names as they are (issue 34, adversary round 14,
part A): rich's emoji codes turned a tool name ``a:fire:`` into ``a🔥``."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

import harness
from harness.cli import main
from harness.telemetry import configure_tracing


def test_an_emoji_code_in_a_tool_name_is_shown_as_text(tmp_path: Path) -> None:
    path = tmp_path / "spans.jsonl"
    turns = [{"tool_calls": [{"name": "a:fire:", "arguments": {}}]}, {"text": "done :smile:"}]
    with configure_tracing(file=path) as tracing:
        harness.run(
            "q",
            provider="mock",
            tools=["calculator"],
            provider_opts={"turns": turns},
            tracer_provider=tracing.provider,
        )
    done = CliRunner().invoke(main, ["traces", "show", str(path)], terminal_width=200)
    assert done.exit_code == 0, done.output
    assert "execute_tool a:fire:" in done.output  # 'execute_tool a🔥' before
    assert "\U0001f525" not in done.output
