"""One writer per run label, through real `harness run` processes: two `--resume --label L`
started together, or two fresh runs of one label, run it once (the other exits 2 naming the
holder's pid) and store every cell exactly once; a holder killed with SIGKILL leaves no lock
behind; with `--executor ray` the driver holds the label."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import pytest

from harness.store._labels import holder_of, label_lock_path
from tests import suite_files

ROOT = Path(__file__).resolve().parents[2]
TASKS = 60

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def latency_suite(folder: Path) -> Path:
    """A run of known length: TASKS mock tasks, 0.15 s per mock call."""
    return suite_files.latency_suite(folder, TASKS, 0.15)


def env(tmpdir: Path) -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    tmpdir.mkdir(exist_ok=True)
    return {**os.environ, "COLUMNS": "300", "TMPDIR": str(tmpdir), "PYTHONPATH": path}


def start(tmp: Path, db: Path, *extra: str, tmpdir: Path | None = None) -> subprocess.Popen[str]:
    suite = tmp / "latency.yaml"
    return subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "run", str(suite), "--providers", "mock",
         "--modes", "react", "--db", str(db), "--label", "L", "--no-progress", *extra],
        cwd=ROOT, env=env(tmpdir or tmp / "tmp"), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def finish(proc: subprocess.Popen[str], timeout: float = 240) -> tuple[int, str]:
    _, err = proc.communicate(timeout=timeout)
    return proc.returncode, err


def per_cell(db: Path) -> dict[str, int]:
    """How many rows each cell key has in the database."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute("SELECT cell_key, count(*) FROM results GROUP BY 1").fetchall()
    finally:
        con.close()
    return {str(k): int(n) for k, n in rows}


def runs(db: Path) -> list[tuple[object, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT label, status, resumed FROM bench_runs").fetchall()
    finally:
        con.close()


def all_once(db: Path) -> None:
    counts = per_cell(db)
    assert len(counts) == TASKS
    assert set(counts.values()) == {1}, {k: n for k, n in counts.items() if n != 1}


def one_ran(a: subprocess.Popen[str], b: subprocess.Popen[str]) -> None:
    """Exactly one of the two ran (exit 0); the other exited 2 naming the winner's pid."""
    (code_a, err_a), (code_b, err_b) = finish(a), finish(b)
    assert sorted([code_a, code_b]) == [0, 2], (err_a, err_b)
    winner, err = (a, err_b) if code_a == 0 else (b, err_a)
    assert f"label 'L' is being run by pid {winner.pid}" in err, err
    assert "wait for it to end, or use another --label" in err
    assert "Traceback" not in err_a + err_b


def wait_for_rows(db: Path, proc: subprocess.Popen[str], at_least: int) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()[1]
        if db.exists():
            try:
                if sum(per_cell(db).values()) >= at_least:
                    return
            except duckdb.Error:  # the writer's moment
                pass
        time.sleep(0.1)
    raise AssertionError(f"fewer than {at_least} rows after 2 minutes")


def test_two_resumes_of_one_label_run_it_once(tmp_path: Path) -> None:
    latency_suite(tmp_path)
    db = tmp_path / "reports" / "harness.duckdb"
    first = start(tmp_path, db, "--tasks", ",".join(f"t{i}" for i in range(10)))
    assert finish(first)[0] == 0
    assert len(per_cell(db)) == 10
    a = start(tmp_path, db, "--resume")
    time.sleep(0.3)  # started close together: whichever takes the label first runs
    b = start(tmp_path, db, "--resume")
    one_ran(a, b)
    all_once(db)
    assert runs(db) == [("L", "finished", 1)]  # one run, resumed once


def test_two_fresh_runs_of_one_label_run_it_once(tmp_path: Path) -> None:
    latency_suite(tmp_path)
    db = tmp_path / "reports" / "harness.duckdb"
    a = start(tmp_path, db)
    b = start(tmp_path, db)
    one_ran(a, b)
    all_once(db)
    assert runs(db) == [("L", "finished", 0)]  # the refused one left no run row


def test_a_holder_killed_with_sigkill_does_not_block_the_next_resume(tmp_path: Path) -> None:
    latency_suite(tmp_path)
    db = tmp_path / "reports" / "harness.duckdb"
    proc = start(tmp_path, db)
    try:
        wait_for_rows(db, proc, 5)
        lock = label_lock_path(db.parent / "runs", "L")
        assert (holder_of(lock) or {}).get("pid") == proc.pid  # it holds the label
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
    again = start(tmp_path, db, "--resume")  # at once: the kernel dropped the lock
    code, err = finish(again)
    assert code == 0, err
    all_once(db)
    assert runs(db) == [("L", "finished", 1)]


def test_a_ray_driver_holds_the_label(tmp_path: Path) -> None:
    try:
        import ray  # noqa: F401
    except ImportError:
        if os.environ.get("HARNESS_RAY_REQUIRED") == "1":
            pytest.fail("ray is not installed")
        pytest.skip("ray is not installed (pip install 'athena-harness[ray]')")
    latency_suite(tmp_path)
    db = tmp_path / "reports" / "harness.duckdb"
    short = Path(tempfile.mkdtemp(prefix="rayl", dir="/tmp"))  # Ray's unix socket paths
    driver = start(tmp_path, db, "--executor", "ray", "--workers", "1", tmpdir=short)
    try:
        _ray_driver_holds_the_label(tmp_path, db, driver)
    finally:
        if driver.poll() is None:  # a failed check: do not leave the driver (and its cluster)
            driver.send_signal(signal.SIGINT)
            driver.communicate(timeout=120)
        shutil.rmtree(short, ignore_errors=True)


def _ray_driver_holds_the_label(tmp_path: Path, db: Path, driver: subprocess.Popen[str]) -> None:
    lock = label_lock_path(db.parent / "runs", "L")
    deadline = time.monotonic() + 120
    while (holder_of(lock) or {}).get("pid") != driver.pid:
        assert driver.poll() is None, driver.communicate()[1]
        assert time.monotonic() < deadline, "the Ray driver never took the label"
        time.sleep(0.1)
    local = start(tmp_path, db, "--resume")
    code, err = finish(local)
    assert code == 2, (err, driver.poll() is None or driver.communicate())
    assert f"label 'L' is being run by pid {driver.pid}" in err
    code, err = finish(driver)
    assert code == 0, err
    all_once(db)
    assert runs(db) == [("L", "finished", 0)]
