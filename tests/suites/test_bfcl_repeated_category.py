"""A BFCL category named twice (adversary round 10 part A): ``bfcl:simple_python,simple_python``
or a repeat in ``categories:`` exited 2 blaming the task source, ``raised ValidationError: ...
duplicate task id 'simple_python_0' ... input_value={...}``, the suite dumped. A repeat now runs
once with a warning, as ``--modes`` does."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from harness.cli import main

YAML = """\
suite: twice
source: {kind: bfcl, categories: [simple_python, " simple_python"], ids: [simple_python_0]}
"""


@pytest.mark.timeout(600)
@pytest.mark.parametrize("how", ["bare", "yaml"])
def test_a_category_named_twice_runs_once_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    monkeypatch.chdir(tmp_path)
    if how == "yaml":
        (tmp_path / "twice.yaml").write_text(YAML)
        suite = "twice.yaml"
    else:
        suite = "bfcl:simple_python,simple_python"
    args = ["run", suite, "--modes", "react", "--providers", "mock", "--db", "h.duckdb"]
    if how == "bare":  # the whole category is 400 entries: one is enough here
        args += ["--tasks", "simple_python_0"]
    done = CliRunner().invoke(main, [*args, "--no-progress"])
    flat = " ".join(done.output.split())
    assert done.exit_code in (0, 3), done.output  # the mock's answer may fail the entry
    assert "category 'simple_python' named 2 times; running it once" in flat, flat
    assert "duplicate task id" not in flat
    with duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT task_id FROM results").fetchall()
    assert rows == [("simple_python_0",)]
