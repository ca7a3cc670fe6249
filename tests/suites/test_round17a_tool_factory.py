"""A task source's tool factory past round 16's fix (issue 34, adversary round 17, part A).

A factory answering a mapping whose own ``get`` raises ended ``harness run`` with its
traceback, exit 1 (the mapping was read outside round 16's guard). A factory cancelling the
cell's task (it runs there, as the cell's options are made) lost every such cell: ``harness
run`` printed "0/3 cells", exit 0. Now the mapping is copied inside the guard, and the cancel is
the cell's error."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest

from harness.suites import Suite


class _Own(BaseException):
    pass


class _RaisingGet(dict[str, Any]):
    def get(self, *args: Any) -> Any:
        raise _Own("its own get")


def _factory(kind: str) -> Any:
    made = [0]

    def factory() -> Any:
        made[0] += 1
        if kind == "get":
            return _RaisingGet()
        if made[0] > 1:  # called at load first, then in the cell's task
            task = asyncio.current_task()
            assert task is not None
            task.cancel()
            if kind == "cancel-uncancel":
                task.uncancel()
        return {}

    return factory


def source(argument: str | None, options: dict[str, Any]) -> Suite:
    suite = Suite.model_validate(
        {
            "suite": "made",
            "tasks": [
                {"id": f"t{i}", "prompt": "hi", "tools": ["read_file"],
                 "expect": {"kind": "contains", "value": "hi"},
                 "mock": {"turns": [{"text": "hi"}]}}
                for i in range(3)
            ],
        }
    )  # fmt: skip
    for task in suite.tasks:
        task.with_tools(_factory(options["what"]))
    return suite


def _run(tmp_path: Path, what: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "plug17f.py").write_text(
        "from tests.suites.test_round17a_tool_factory import source\n"
    )
    (tmp_path / "s.yaml").write_text(
        f"suite: x\nsource: {{kind: 'plug17f:source', what: {what}}}\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", "s.yaml", "--providers", "mock",
         "--modes", "react", "--db", "h.duckdb", "--no-progress"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.mark.slow
def test_a_mapping_whose_get_raises_is_not_a_traceback(tmp_path: Path) -> None:
    proc = _run(tmp_path, "get")
    assert "Traceback" not in proc.stderr  # exit 1, _Own: its own get
    assert proc.returncode == 0, proc.stderr
    assert "3/3 cells, 3 passed" in proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("what", ["cancel", "cancel-uncancel"])
def test_a_factory_cancelling_its_cells_task_is_the_cells_error(tmp_path: Path, what: str) -> None:
    proc = _run(tmp_path, what)
    assert proc.returncode == 3, proc.stderr  # 0 with "0/3 cells" before (cancel)
    assert "3/3 cells, 0 passed, 0 failed, 3 errored" in proc.stderr
    assert proc.stderr.count("ConfigError: the task's tool factory cancelled its run's task") == 3
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM results WHERE status = 'error'").fetchall() == [
            (3,)
        ]
