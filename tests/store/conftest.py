"""Store test fixtures: a fresh database path, an open writer, and a result-row factory."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.store import Store

RowFactory = Callable[..., dict[str, Any]]


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "reports" / "harness.duckdb"


@pytest.fixture
def store(db_path: Path) -> Iterator[Store]:
    s = Store.open(db_path)
    try:
        yield s
    finally:
        s.close()


@pytest.fixture
def make_row() -> RowFactory:
    """``make_row(run_id, task_id, **columns)``: a passing react/mock cell of suite ``s``."""

    def make(run_id: str, task_id: str = "t1", **columns: Any) -> dict[str, Any]:
        row: dict[str, Any] = {
            "run_id": run_id,
            "suite": "s",
            "task_id": task_id,
            "mode": "react",
            "provider": "mock",
            "epoch": 0,
            "passed": True,
            "finish_reason": "stop",
        }
        row.update(columns)
        return row

    return make
