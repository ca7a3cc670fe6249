"""`harness traces show` never prints a control character from a trace file raw: a tool name
with terminal escape sequences (a model can name any tool) is shown escaped."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import harness
from harness.telemetry import configure_tracing
from harness.telemetry._show import _t

EVIL = "\x1b]0;pwned\x07\x1b[2J\x1b[31mrm\u202e -rf\x9b"


def test_control_characters_are_escaped() -> None:
    assert _t(EVIL) == "\\x1b]0;pwned\\x07\\x1b[2J\\x1b[31mrm\\u202e -rf\\x9b"
    assert _t("plain [bold]name[/]") == "plain \\[bold]name\\[/]"
    assert _t("lone \ud83d") == "lone \\ud83d"


@pytest.mark.slow
def test_traces_show_prints_an_escape_sequence_tool_name_escaped(tmp_path: Path) -> None:
    path = tmp_path / "spans.jsonl"
    with configure_tracing(file=path) as tracing:
        harness.run(
            "q",
            provider="mock",
            tools=["calculator"],
            provider_opts={
                "turns": [
                    {"tool_calls": [{"name": EVIL, "arguments": {}}]},
                    {"text": f"done {EVIL}"},
                ]
            },
            tracer_provider=tracing.provider,
        )
    assert "\\u001b" in path.read_text() or "\x1b" in path.read_text()  # it is in the file
    out = subprocess.run(
        [sys.executable, "-m", "harness.cli", "traces", "show", str(path)],
        capture_output=True, text=True, timeout=120, env={"COLUMNS": "300", "PATH": ""},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "\x1b" not in out.stdout
    assert "\x07" not in out.stdout
    assert "\x9b" not in out.stdout
    assert "\u202e" not in out.stdout
    assert "\\x1b]0;pwned\\x07" in out.stdout
