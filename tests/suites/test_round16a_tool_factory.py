"""A task source's tool factory (``task.with_tools(factory)``) that raises or answers what is
not a mapping (issue 34, adversary round 16, part A): it is called as the suite is loaded, and
``harness run`` ended with its traceback, exit 1 (``AttributeError: 'list' object has no
attribute 'get'`` for a list). Now it is one line naming the factory, exit 2; raising only at
a later cell it is that cell's error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.errors import SuiteError
from harness.suites import SOURCES, Suite, load_suites


class _Own(BaseException):
    pass


def _factory(kind: str) -> Any:
    def factory() -> Any:
        if kind == "raises":
            raise RuntimeError("factory boom")
        if kind == "base":
            raise _Own("its own")
        return [object(), 5]

    return factory


def _source(argument: str | None, options: dict[str, Any]) -> Suite:
    suite = Suite.model_validate(
        {
            "suite": "made",
            "tasks": [
                {"id": "a", "prompt": "hi", "tools": ["read_file"],
                 "expect": {"kind": "contains", "value": "hi"},
                 "mock": {"turns": [{"text": "hi"}]}}
            ],
        }
    )  # fmt: skip
    suite.tasks[0].with_tools(_factory(options.get("what", "")))
    return suite


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        ("raises", "the task's tool factory raised RuntimeError: factory boom"),
        ("base", "the task's tool factory raised _Own: its own"),
        ("list", "the task's tool factory returned [<object object>"),
    ],
)
def test_a_tool_factory_failing_as_the_suite_loads_is_one_clear_error(
    kind: str, said: str, tmp_path: Path
) -> None:
    SOURCES.register("r16a-factory", _source, replace=True)
    (tmp_path / "s.yaml").write_text(f"suite: x\nsource: {{kind: r16a-factory, what: {kind}}}\n")
    with pytest.raises(SuiteError) as caught:  # RuntimeError, _Own, AttributeError before
        load_suites([str(tmp_path / "s.yaml")])
    assert said in str(caught.value)


@pytest.mark.slow
def test_harness_run_says_it_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "plug16f.py").write_text(
        "from tests.suites.test_round16a_tool_factory import _source\n"
    )
    (tmp_path / "s.yaml").write_text("suite: x\nsource: {kind: 'plug16f:_source', what: list}\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    proc = subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", "s.yaml", "--providers", "mock",
         "--modes", "react", "--db", "h.duckdb", "--no-progress"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr  # 1 with a traceback before
    assert "Traceback" not in proc.stderr
    assert "the task's tool factory returned [<object object>" in proc.stderr
