"""The ``harness/cli/`` package: every command group is registered, ``harness --help`` stays
light, the layers below never import the CLI, and the progress/signal driver behaves."""

from __future__ import annotations

import ast
import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

import harness
from harness.cli import main
from harness.cli._progress import drive, progress_bar

PACKAGE = Path(harness.__file__).parent


def _imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports (at any depth, TYPE_CHECKING blocks included)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found


def test_every_command_group_is_registered() -> None:
    assert sorted(main.commands) == [
        "baseline", "cassettes", "compact", "gate", "plugins", "report", "run", "suites",
        "traces", "view",
    ]  # fmt: skip
    assert sorted(main.commands["suites"].commands) == ["audit", "schema", "validate"]  # type: ignore[attr-defined]


@pytest.mark.slow
def test_importing_the_cli_loads_only_click() -> None:
    code = (
        "import sys, harness.cli; "
        "heavy = ('pandas','duckdb','pyarrow','rich','scipy','opentelemetry','httpx','yaml',"
        "'harness.bench','harness.report','harness.store','harness.view','starlette'); "
        "print(','.join(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


@pytest.mark.slow
def test_python_dash_m_runs_the_same_command() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "harness.cli", "--help"], capture_output=True, text=True, check=True
    )
    assert out.stdout.startswith("Usage: python -m harness.cli [OPTIONS] COMMAND")
    listed = [line.split()[0] for line in out.stdout.split("Commands:\n", 1)[1].splitlines()]
    assert listed == sorted(main.commands)
    assert CliRunner().invoke(main, ["--help"]).exit_code == 0


def test_no_package_below_the_cli_imports_it_and_report_has_no_click() -> None:
    for folder in (
        "bench", "suites", "grading", "cassettes", "report", "store", "telemetry", "kernel",
        "modes", "providers",
    ):  # fmt: skip
        for path in sorted((PACKAGE / folder).rglob("*.py")):
            imported = _imported_modules(path)
            assert not {m for m in imported if m.split(".")[:2] == ["harness", "cli"]}, path
            if folder == "report":
                assert "click" not in imported, path


def test_progress_bar_yields_nothing_when_disabled_and_a_callback_when_enabled() -> None:
    console = Console(file=open(os.devnull, "w"), force_terminal=False)  # noqa: SIM115
    try:
        with progress_bar(console, 3, False) as update:
            assert update is None
        with progress_bar(console, 3, True) as update:
            assert callable(update)
    finally:
        console.file.close()


class _WaitsForStop:
    """A runner whose ``run`` sends itself SIGINT and returns once ``request_stop`` is called."""

    def __init__(self) -> None:
        self.stopped = asyncio.Event()
        self.on_outcome: Any = "unset"

    def request_stop(self) -> None:
        self.stopped.set()

    async def run(self, cells: Any, on_outcome: Any = None) -> str:
        self.on_outcome = on_outcome
        os.kill(os.getpid(), signal.SIGINT)
        await asyncio.wait_for(self.stopped.wait(), timeout=10)
        return "summary"


def test_drive_turns_sigint_into_a_graceful_stop_and_restores_the_handler() -> None:
    before = signal.getsignal(signal.SIGINT)
    runner = _WaitsForStop()
    # a stand-in runner (not an Executor), whose run() returns a str, not a MatrixSummary
    assert drive(runner, [], Console(), False) == "summary"  # type: ignore[arg-type, comparison-overlap]
    assert runner.stopped.is_set()
    assert runner.on_outcome is None  # no bar: no callback
    assert signal.getsignal(signal.SIGINT) is before
