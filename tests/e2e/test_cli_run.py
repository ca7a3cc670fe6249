"""`harness run` / report / gate end to end through the installed console script."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

#: Spawns processes, sandboxes, browsers, clusters or servers (the fast loop skips it).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def harness(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("harness")
    cmd = [exe] if exe else [sys.executable, "-m", "harness.cli"]
    env = {**os.environ, "COLUMNS": "300"}  # one summary line, whatever the terminal
    return subprocess.run(
        [*cmd, *args], cwd=cwd, capture_output=True, text=True, timeout=300, check=False, env=env
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the project's suites, cassettes and profiles, to run in isolation."""
    for name in ("suites", "cassettes", "profiles"):
        shutil.copytree(ROOT / name, tmp_path / name)
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_run_report_gate_on_the_recorded_cassettes(project: Path) -> None:
    run = harness(
        "run", "suites/arithmetic.yaml", "--modes", "react,reflexion", "--no-progress",
        cwd=project,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "0 errored" in run.stderr
    db = project / "reports" / "harness.duckdb"
    con = duckdb.connect(str(db), read_only=True)
    try:
        providers = dict(
            con.execute("SELECT provider, count(*) FROM results GROUP BY provider").fetchall()
        )
        crashed = con.execute("SELECT count(*) FROM results WHERE error IS NOT NULL").fetchone()
        tokens = con.execute(
            "SELECT sum(input_tokens) FROM results WHERE provider = 'llamaserver-qwen-chat'"
        ).fetchone()
    finally:
        con.close()
    # 'auto' providers: the mock plus the servers the cassettes were recorded from, but the
    # retired llamacpp-gemma (its server never showed the model its system message).
    real = {"llamaserver-gemma", "llamaserver-qwen-chat", "llamaserver-qwen-messages"}
    assert set(providers) == {"mock", *real}
    assert providers["mock"] == providers["llamaserver-gemma"] > 0  # both ran 2 modes, 1 epoch
    assert providers["llamaserver-qwen-chat"] == providers["llamaserver-qwen-messages"] > 0
    assert crashed == (0,)  # every real cell replayed from its cassette
    assert tokens is not None
    assert tokens[0] > 0
    report = harness("report", "--out", "reports", cwd=project)
    assert report.returncode == 0, report.stderr
    html = (project / "reports" / "report.html").read_text(encoding="utf-8")
    assert "llamaserver-qwen-chat" in html
    assert "llamacpp-gemma" not in html
    saved = harness("baseline", "save", "-o", "reports/baseline.json", cwd=project)
    assert saved.returncode == 0, saved.stderr
    gate = harness("gate", "--baseline", "reports/baseline.json", cwd=project)
    assert gate.returncode == 0, gate.stdout + gate.stderr


def test_unknown_mode_and_provider_are_bad_input(project: Path) -> None:
    bad_mode = harness("run", "suites", "--modes", "react,reflection", cwd=project)
    assert bad_mode.returncode == 2
    assert "did you mean 'reflexion'" in bad_mode.stderr
    bad_provider = harness("run", "suites", "--providers", "openia:gpt-4o", cwd=project)
    assert bad_provider.returncode == 2
    assert "'openia'" in bad_provider.stderr
    assert not (project / "reports" / "harness.duckdb").exists()


def test_a_missing_cassette_is_an_error_cell_exit_3_with_the_rerecord_command(
    project: Path,
) -> None:
    folder = project / "cassettes" / "arithmetic" / "llamacpp-gemma" / "react"
    victim = sorted(folder.iterdir())[0]
    victim.unlink()
    task, _, rest = victim.name.partition(".e")
    missing_epoch = int(rest.split(".")[0])
    run = harness(
        "run", "suites/arithmetic.yaml", "--modes", "react", "--providers", "llamacpp-gemma",
        "--tasks", task, "--epochs", "2", "--no-progress", cwd=project,
    )  # fmt: skip
    assert run.returncode == 3, run.stderr  # some cells could not be scored
    assert "1 errored" in run.stderr
    assert f"arithmetic/{task}/react/llamacpp-gemma/e{missing_epoch}" in run.stderr.replace(
        "\n", ""
    )
    con = duckdb.connect(str(project / "reports" / "harness.duckdb"), read_only=True)
    try:
        rows = con.execute(
            "SELECT epoch, finish_reason, halted_reason, passed, status, error FROM results "
            "ORDER BY epoch"
        ).fetchall()
    finally:
        con.close()
    by_epoch = {r[0]: r for r in rows}
    assert set(by_epoch) == {0, 1}
    broken = by_epoch[missing_epoch]
    assert broken[1] == "error_during_execution"
    assert victim.name in broken[2]
    assert "--record-mode all" in broken[2]
    assert broken[3] is False
    assert broken[4] == "error"
    assert victim.name in broken[5]
    other = by_epoch[1 - missing_epoch]
    assert other[4] in ("passed", "failed")
    assert other[1] != "error_during_execution"
