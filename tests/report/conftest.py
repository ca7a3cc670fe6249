"""Builders of ``results`` DataFrames with known contents, for the report and gate tests."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pandas as pd
import pytest

Row = dict[str, Any]
MakeRows = Callable[..., pd.DataFrame]


def _row(**values: Any) -> Row:
    base: Row = {
        "run_id": "run-1",
        "suite": "s",
        "task_id": "t",
        "mode": "react",
        "provider": "live",
        "model": "mock-1",
        "epoch": 0,
        "passed": True,
        "score": 1.0,
        "grader_explanation": "",
        "finish_reason": "stop",
        "category": "success",
        "iterations": 1,
        "tool_calls": 0,
        "llm_calls": 1,
        "input_tokens": 10,
        "output_tokens": 5,
        "cost_usd": 0.01,
        "duration_ms": 10,
        "trace_id": "0" * 32,
    }
    base.update(values)
    return base


@pytest.fixture
def rows() -> Callable[..., pd.DataFrame]:
    """``rows(dict, dict, ...)``: a results frame; unspecified columns get plain defaults."""

    def make(*specs: Row) -> pd.DataFrame:
        return pd.DataFrame([_row(**s) for s in specs])

    return make


def paired_frame(
    mode_a: str,
    mode_b: str,
    outcomes: Iterable[tuple[bool, bool]],
    *,
    provider: str = "live",
    epochs: int = 1,
    costs: Sequence[tuple[float, float]] | None = None,
) -> pd.DataFrame:
    """Two modes on the same tasks: ``outcomes[i]`` is (A passed, B passed) for task i (repeated
    for every epoch)."""
    out = []
    for i, (pa, pb) in enumerate(outcomes):
        for e in range(epochs):
            ca, cb = costs[i] if costs is not None else (0.01, 0.01)
            out.append(
                _row(
                    task_id=f"t{i:03d}",
                    mode=mode_a,
                    provider=provider,
                    epoch=e,
                    passed=pa,
                    cost_usd=ca,
                )
            )
            out.append(
                _row(
                    task_id=f"t{i:03d}",
                    mode=mode_b,
                    provider=provider,
                    epoch=e,
                    passed=pb,
                    cost_usd=cb,
                )
            )
    return pd.DataFrame(out)


def discordant(both: int, only_a: int, only_b: int, neither: int) -> list[tuple[bool, bool]]:
    """Outcome pairs with the given 2x2 counts."""
    return (
        [(True, True)] * both
        + [(True, False)] * only_a
        + [(False, True)] * only_b
        + [(False, False)] * neither
    )


@pytest.fixture
def paired() -> Callable[..., pd.DataFrame]:
    return paired_frame


@pytest.fixture
def counts() -> Callable[[int, int, int, int], list[tuple[bool, bool]]]:
    return discordant
