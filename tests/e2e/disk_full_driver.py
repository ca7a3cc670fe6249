"""The full-disk scenario of tests/e2e/test_disk_full.py, run as a script (inside the namespace
that holds the small file system, when ``bwrap`` makes it):

    python disk_full_driver.py MOUNT OUT.json transient|persistent HOLD_S WAIT_S real|inject

A real `harness run --label L` writes its database under MOUNT; once its first shard is on
disk, the disk is made full (``real``: a file grows until ENOSPC; ``inject``: a flag file the
sitecustomize of ``disk_full_inject/`` reads, making every Python write under MOUNT fail with
ENOSPC, half a line first) for HOLD_S seconds (``transient``: the filler takes back whatever
is freed meanwhile) or until the run exits (``persistent``: filled once, then a ``--resume``
with the room back). What happened is written to OUT.json: exit codes, timings, the trace
file's lines that do not parse, rows per cell, the runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
INJECT = Path(__file__).resolve().parent / "disk_full_inject"
TASKS = 120


def latency_suite(folder: Path) -> Path:
    """Mock tasks of one tool call and one answer, 0.1 s per mock call: about 6 s of cells at
    concurrency 4 on any machine, so the disk fills mid-run."""
    sys.path.insert(0, str(ROOT))  # a script: the tests' helpers are found from the checkout
    from tests.suite_files import latency_suite as write

    return write(folder, TASKS, 0.1)


class Filler:
    """Makes the file system of ``mount`` full until stopped, then frees it; ``refill``: takes
    back whatever is freed meanwhile (nothing gets through), else fills it once."""

    def __init__(self, mount: Path, how: str, *, refill: bool) -> None:
        self.path = mount / ("filler" if how == "real" else "disk-full.flag")
        self.how = how
        self.refill = refill
        self.stop = threading.Event()
        self.full = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self.thread.start()
        self.full.wait(30)

    def _run(self) -> None:
        if self.how == "inject":
            self.path.write_text("full")
            self.full.set()
            self.stop.wait()
            return
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            while not self.stop.is_set():
                for size in (1 << 20, 1 << 12, 1):  # whatever was freed is taken again
                    try:
                        while True:
                            os.write(fd, b"\0" * size)
                    except OSError:
                        pass
                self.full.set()
                self.stop.wait(0.02 if self.refill else None)
        finally:
            os.close(fd)

    def free(self) -> None:
        self.stop.set()
        self.thread.join()
        self.path.unlink()


def harness(mount: Path, suite: Path, wait_s: float, how: str, *extra: str) -> list[Any]:
    env = {**os.environ, "COLUMNS": "300", "HARNESS_DISK_FULL_WAIT_S": str(wait_s)}
    path = [str(ROOT), *([str(INJECT)] if how == "inject" else []), env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(p for p in path if p)
    env["HARNESS_TEST_DISK_FULL_FLAG"] = str(mount / "disk-full.flag")
    env["HARNESS_TEST_DISK_FULL_ROOT"] = str(mount)
    db = mount / "reports" / "harness.duckdb"
    return [
        [sys.executable, "-m", "harness.cli", "run", str(suite), "--providers", "mock",
         "--modes", "react", "--db", str(db), "--label", "L", "--no-progress", *extra],
        env,
    ]  # fmt: skip


def check(mount: Path) -> dict[str, Any]:
    """The trace files' lines (and those that do not parse), rows per cell, the runs."""
    import duckdb

    reports = mount / "reports"
    lines = torn = 0
    for trace in sorted((reports / "traces").glob("*.jsonl")):
        for line in trace.read_bytes().splitlines():
            lines += 1
            try:
                json.loads(line)
            except ValueError:
                torn += 1
    con = duckdb.connect(str(reports / "harness.duckdb"), read_only=True)
    try:
        cells = con.execute("SELECT cell_key, count(*) FROM results GROUP BY 1").fetchall()
        runs = con.execute("SELECT status, resumed, error FROM bench_runs").fetchall()
        spans = con.execute("SELECT count(*) FROM spans").fetchone()
    finally:
        con.close()
    return {
        "trace_lines": lines,
        "torn_lines": torn,
        "cells": len(cells),
        "rows": sum(int(n) for _, n in cells),
        "max_rows_per_cell": max((int(n) for _, n in cells), default=0),
        "runs": [list(r) for r in runs],
        "spans": int(spans[0]) if spans else 0,
    }


def main() -> None:
    mount, out, scenario, hold_s, wait_s, how = sys.argv[1:7]
    root = Path(mount)
    suite = latency_suite(root.parent)
    command, env = harness(root, suite, float(wait_s), how)
    started = time.monotonic()
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    runs = root / "reports" / "runs"
    while not any(runs.glob("2*/results-*.parquet")):  # rows are being written
        if proc.poll() is not None or time.monotonic() - started > 120:
            raise SystemExit(f"the run ended before its first shard: {proc.communicate()[1]}")
        time.sleep(0.05)
    filler = Filler(root, how, refill=scenario == "transient")
    filler.start()
    full_at = time.monotonic()
    result: dict[str, Any] = {"shards_before_full": len(list(runs.glob("2*/results-*.parquet")))}
    if scenario == "transient":
        time.sleep(float(hold_s))
        result["running_when_freed"] = proc.poll() is None
        filler.free()
        result["held_full_s"] = round(time.monotonic() - full_at, 2)
        _, err = proc.communicate(timeout=300)
        result.update(code=proc.returncode, stderr=err)
    else:
        _, err = proc.communicate(timeout=300)
        result.update(code=proc.returncode, stderr=err, exit_after_full_s=round(
            time.monotonic() - full_at, 2))  # fmt: skip
        filler.free()
    result["run_s"] = round(time.monotonic() - started, 2)
    result["after_run"] = check(root)
    if scenario == "persistent":
        again = subprocess.run(
            [*command, "--resume"], cwd=ROOT, env=env, capture_output=True, text=True,
            timeout=300,
        )  # fmt: skip
        result["resume"] = {"code": again.returncode, "stderr": again.stderr, **check(root)}
    Path(out).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
