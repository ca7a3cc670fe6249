"""`harness demo` (what `nox -s bench` runs today), end to end through the real CLI."""

from __future__ import annotations

import subprocess
import sys

from click.testing import CliRunner

from harness.bench.demo import DEMO_TASKS, run_demo
from harness.cli import main
from harness.kernel.terminations import FinishReason


def test_demo_matrix_every_cell_passes() -> None:
    rows = run_demo(("react", "plan_and_solve", "reflexion"), epochs=2)
    assert len(rows) == len(DEMO_TASKS) * 3 * 2
    for task, mode, _epoch, result in rows:
        assert task.check(result), (task.id, mode, result.finish_reason, result.halted_reason)
    calls = {(t.id, m): r.llm_calls for t, m, _, r in rows}
    # Plan-and-Solve adds one plan call; Reflexion adds a critique after each tool-using turn.
    assert calls[("mul-add", "plan_and_solve")] == calls[("mul-add", "react")] + 1
    assert calls[("mul-add", "reflexion")] == calls[("mul-add", "react")] + 2
    trap = {m: r.finish_reason for t, m, _, r in rows if t.id == "stuck-loop-trap"}
    assert set(trap.values()) <= {
        FinishReason.ERROR_NO_PROGRESS,
        FinishReason.ERROR_CONSECUTIVE_MISTAKES,
    }


def test_cli_demo_prints_table_and_exits_zero() -> None:
    result = CliRunner().invoke(main, ["demo", "--modes", "react,reflexion"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "6/6 cells passed" in result.output
    assert "reflexion" in result.output


def test_cli_demo_rejects_unknown_mode_with_exit_2() -> None:
    result = CliRunner().invoke(main, ["demo", "--modes", "react,reflection"])
    assert result.exit_code == 2
    assert "did you mean 'reflexion'" in result.output


def test_console_script_is_installed() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "harness.cli", "--version"], capture_output=True, text=True
    )
    assert out.returncode == 0
    assert "harness" in out.stdout
