"""A small built-in demo matrix (tasks x modes x epochs) on the scripted mock provider.

It exercises the kernel end to end, offline, and prints one row per cell. The full suite runner
(YAML suites, real providers, cassettes) lives beside it in this package as it lands.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from harness.api import arun
from harness.kernel.result import Result
from harness.kernel.terminations import FinishReason

__all__ = ["DEMO_TASKS", "DemoTask", "run_demo"]


@dataclass(frozen=True, slots=True)
class DemoTask:
    id: str
    prompt: str
    tools: tuple[str, ...]
    turns: tuple[dict[str, Any], ...]
    check: Callable[[Result], bool]
    files: dict[str, str] | None = None


def _calc(expr: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "calculator", "arguments": {"expression": expr}}]}


DEMO_TASKS: tuple[DemoTask, ...] = (
    DemoTask(
        "mul-add",
        "What is 17*23+4? Answer with the number only.",
        ("calculator",),
        (_calc("17*23"), _calc("391+4"), {"text": "395"}),
        lambda r: (r.text or "").strip() == "395",
    ),
    DemoTask(
        "read-and-submit",
        "Read notes.txt and submit the secret word with the finish tool.",
        ("read_file", "finish"),
        (
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
            {"tool_calls": [{"name": "finish", "arguments": {"deliverable": "marmalade"}}]},
        ),
        lambda r: r.finish_reason is FinishReason.SUBMITTED and r.deliverable == "marmalade",
        {"notes.txt": "The secret word is marmalade.\n"},
    ),
    DemoTask(
        "stuck-loop-trap",
        "Look up the key 'answer' (it does not exist) and report it.",
        ("kv_get",),
        ({"tool_calls": [{"name": "kv_get", "arguments": {"key": "answer"}}]},),
        lambda r: (
            r.finish_reason
            in (FinishReason.ERROR_NO_PROGRESS, FinishReason.ERROR_CONSECUTIVE_MISTAKES)
        ),
    ),
)


async def _cell(task: DemoTask, mode: str) -> Result:
    return await arun(
        task.prompt,
        provider="mock",
        mode=mode,
        tools=list(task.tools),
        workspace_files=task.files,
        provider_opts={"turns": [dict(t) for t in task.turns], "when_exhausted": "repeat_last"},
        max_iterations=8,
    )


def run_demo(
    modes: Sequence[str] = ("react", "plan_and_solve", "reflexion"), epochs: int = 1
) -> list[tuple[DemoTask, str, int, Result]]:
    """Run every (task, mode, epoch) cell concurrently and return the rows."""

    async def main() -> list[tuple[DemoTask, str, int, Result]]:
        cells = [(t, m, e) for t in DEMO_TASKS for m in modes for e in range(epochs)]
        results = await asyncio.gather(*(_cell(t, m) for t, m, _ in cells))
        return [(t, m, e, r) for (t, m, e), r in zip(cells, results, strict=True)]

    return asyncio.run(main())


def print_demo(modes: Sequence[str], epochs: int) -> int:
    """Run the demo and print a table; returns the number of failed cells."""
    from rich.console import Console
    from rich.table import Table

    t0 = time.perf_counter()
    rows = run_demo(modes, epochs)
    elapsed = time.perf_counter() - t0
    table = Table(title="harness demo: built-in tasks x modes on the scripted mock provider")
    for col in ("task", "mode", "epoch", "passed", "finish_reason", "iter", "llm calls", "tokens"):
        table.add_column(col, justify="right" if col in ("iter", "llm calls", "tokens") else "left")
    failed = 0
    for task, mode, epoch, r in rows:
        ok = task.check(r)
        failed += not ok
        table.add_row(
            task.id,
            mode,
            str(epoch),
            "[green]yes[/]" if ok else "[red]no[/]",
            r.finish_reason.value,
            str(r.iterations),
            str(r.llm_calls),
            str(r.usage.total_tokens),
        )
    console = Console()
    if not console.is_terminal:  # piped or captured: do not truncate cells to 80 columns
        console = Console(width=160)
    console.print(table)
    console.print(f"{len(rows) - failed}/{len(rows)} cells passed in {elapsed:.2f}s")
    return failed
