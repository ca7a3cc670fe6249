"""Readers are never locked out: while a real `harness run` writes a few thousand mock cells,
`harness report --run latest` and a read-only DuckDB connection both work, and see the run grow.
Then kill -9 of a run, `--resume`: nothing lost, nothing twice."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

#: Spawns processes, sandboxes, browsers, clusters or servers (the fast loop skips it).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
#: The five quick built-in suites (not `code`, whose cells each run pytest in a sandbox, nor the
#: delegation and review suites): 79 tasks x 3 modes, mock provider.
SUITES = [str(ROOT / "suites" / f"{name}.yaml")
          for name in ("arithmetic", "files", "lookup", "structured", "traps")]  # fmt: skip
CELLS_PER_EPOCH = 237


def command(*args: str) -> list[str]:
    exe = shutil.which("harness")
    return [*([exe] if exe else [sys.executable, "-m", "harness.cli"]), *args]


def env(tmp: Path) -> dict[str, str]:
    return {**os.environ, "COLUMNS": "300", "TMPDIR": str(tmp)}


def start_run(db: Path, epochs: int, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        command("run", *SUITES, "--providers", "mock", "--epochs", str(epochs),
                "--db", str(db), "--no-progress", *extra),
        cwd=ROOT, env=env(db.parent), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True,
    )  # fmt: skip


def count(db: Path, sql: str) -> int:
    con = duckdb.connect(str(db), read_only=True)
    try:
        row = con.execute(sql).fetchone()
    finally:
        con.close()
    assert row is not None
    return int(row[0])


def wait_for_results(db: Path, proc: subprocess.Popen[str], at_least: int) -> int:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
        if db.exists():
            try:
                n = count(db, "SELECT count(*) FROM results")
            except duckdb.Error:  # the writer's moment (creating the file, opening the run)
                n = 0
            if n >= at_least:
                return n
        time.sleep(0.2)
    raise AssertionError(f"fewer than {at_least} results after 2 minutes")


def test_report_and_a_read_only_connection_work_while_a_run_writes(tmp_path: Path) -> None:
    db = tmp_path / "reports" / "harness.duckdb"
    epochs = 12  # 2,844 cells
    proc = start_run(db, epochs, "--label", "live")
    try:
        first = wait_for_results(db, proc, 100)
        report = subprocess.run(
            command("report", "--db", str(db), "--run", "latest", "--out", str(tmp_path / "out")),
            cwd=ROOT, env=env(tmp_path), capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert report.returncode == 0, report.stderr
        assert "| react" in (tmp_path / "out" / "report.md").read_text()
        con = duckdb.connect(str(db), read_only=True)  # a user's shell, held a while
        try:
            status = con.execute("SELECT status FROM bench_runs").fetchall()
            later = con.execute("SELECT count(*) FROM v_run_cells").fetchone()
            spans = con.execute("SELECT count(*) FROM spans").fetchone()
        finally:
            con.close()
        assert status == [("running",)]
        assert later is not None
        assert later[0] >= first
        assert spans is not None
        assert spans[0] > 0
        assert proc.poll() is None  # all of it while the run was writing
    finally:
        out, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, out
    total = epochs * CELLS_PER_EPOCH
    assert count(db, "SELECT count(*) FROM results") == total
    assert count(db, "SELECT count(*) FROM results_compacted") == total  # compacted at the end
    assert count(db, "SELECT count(*) FROM bench_runs WHERE status = 'finished'") == 1
    assert not list((db.parent / "runs").glob("2*"))  # no shard left


def test_kill_9_then_resume_loses_and_repeats_nothing(tmp_path: Path) -> None:
    db = tmp_path / "reports" / "harness.duckdb"
    epochs = 10
    proc = start_run(db, epochs, "--label", "k")
    try:
        wait_for_results(db, proc, 300)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
    kept = count(db, "SELECT count(*) FROM results")
    assert kept >= 300
    again = subprocess.run(
        command("run", *SUITES, "--providers", "mock", "--epochs", str(epochs),
                "--db", str(db), "--no-progress", "--label", "k", "--resume"),
        cwd=ROOT, env=env(tmp_path), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    total = epochs * CELLS_PER_EPOCH
    assert count(db, "SELECT count(*) FROM results") == total  # each cell exactly once
    assert count(db, "SELECT count(DISTINCT cell_key) FROM results") == total
    assert count(db, "SELECT count(*) FROM bench_runs") == 1
    assert not list((db.parent / "runs").glob("2*"))
