"""Readers during a large run: while ``harness run`` writes a 20,000-cell mock matrix, a reader
loop keeps opening read-only DuckDB connections (a user's ``duckdb`` shell or pandas) and runs
``harness report --run latest`` in a subprocess, again and again until the run ends.

It reports, for each kind of reader, how many attempts succeeded, the median and worst latency,
and the results count each one saw (it must grow while the run writes), then checks the finished
database: every cell exactly once, all compacted, no shard left.

    python benchmarks/live_reading.py                  # 85 epochs = 20,145 cells
    python benchmarks/live_reading.py --epochs 10      # a quick look

Exit code 1 when ``harness report`` failed, a read-only connection failed for any reason but
meeting one of the writer's short moments (a plain ``duckdb.connect`` does not wait for them:
see docs/sql.md), or a check did not hold.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parent.parent
#: The five quick built-in suites (79 tasks x 3 modes on the mock provider).
SUITES = [str(ROOT / "suites" / f"{name}.yaml")
          for name in ("arithmetic", "files", "lookup", "structured", "traps")]  # fmt: skip
CELLS_PER_EPOCH = 237


def harness_cmd(*args: str) -> list[str]:
    exe = shutil.which("harness")
    return [*([exe] if exe else [sys.executable, "-m", "harness.cli"]), *args]


def read_only_count(db: Path) -> int:
    con = duckdb.connect(str(db), read_only=True)
    try:
        row = con.execute("SELECT count(*) FROM results").fetchone()
        con.execute("SELECT count(*) FROM spans").fetchone()
    finally:
        con.close()
    return int(row[0]) if row else 0


def report_once(db: Path, out: Path, env: dict[str, str]) -> tuple[bool, str]:
    done = subprocess.run(
        harness_cmd("report", "--db", str(db), "--run", "latest", "--out", str(out)),
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    return done.returncode == 0, done.stderr.strip()[-300:]


def summary(name: str, times: list[float], seen: list[int], failures: list[str]) -> str:
    if not times:
        return f"{name:<22} no attempt"
    return (
        f"{name:<22} {len(times):>4} ok {len(failures):>3} failed  median "
        f"{statistics.median(times) * 1000:>7.0f} ms  worst {max(times) * 1000:>7.0f} ms  "
        f"saw {min(seen) if seen else 0:,} .. {max(seen) if seen else 0:,} results"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=85, help="epochs of 237 cells (85: 20,145)")
    args = parser.parse_args()
    total = args.epochs * CELLS_PER_EPOCH
    with tempfile.TemporaryDirectory(prefix="harness-live-") as tmp:
        work = Path(tmp)
        db = work / "reports" / "harness.duckdb"
        env = {**os.environ, "TMPDIR": str(work), "COLUMNS": "200"}
        started = time.monotonic()
        run = subprocess.Popen(
            harness_cmd("run", *SUITES, "--providers", "mock", "--epochs", str(args.epochs),
                        "--db", str(db), "--no-progress", "--label", "live"),
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        shell_t: list[float] = []
        shell_seen: list[int] = []
        shell_fail: list[str] = []
        report_t: list[float] = []
        report_fail: list[str] = []
        report_seen: list[int] = []
        while run.poll() is None:
            if not db.exists():
                time.sleep(0.2)
                continue
            t0 = time.perf_counter()
            try:
                n = read_only_count(db)
            except duckdb.Error as exc:
                at = time.monotonic() - started
                seen = shell_seen[-1] if shell_seen else 0
                shell_fail.append(f"at {at:.1f} s, after {seen:,} results: {str(exc)[:120]}")
                n = -1
            if n >= 0:
                shell_t.append(time.perf_counter() - t0)
                shell_seen.append(n)
            if run.poll() is not None or n <= 0:
                time.sleep(0.2)
                continue
            t0 = time.perf_counter()
            ok, err = report_once(db, work / "out", env)
            if run.poll() is None:  # count only the reports that ran during the run
                if ok:
                    report_t.append(time.perf_counter() - t0)
                    report_seen.append(n)
                else:
                    report_fail.append(err)
            time.sleep(0.5)
        out = run.stdout.read() if run.stdout else ""
        wall = time.monotonic() - started
        print(f"run of {total:,} cells: exit {run.returncode} in {wall:.1f} s")
        print(summary("read-only connection", shell_t, shell_seen, shell_fail))
        print(summary("harness report", report_t, report_seen, report_fail))
        for failure in (shell_fail + report_fail)[:5]:
            print("  failure:", failure)
        problems = []
        if run.returncode != 0:
            problems.append(f"the run failed:\n{out[-2000:]}")
        final = read_only_count(db) if db.exists() else 0
        con = duckdb.connect(str(db), read_only=True)
        try:
            distinct = con.execute("SELECT count(DISTINCT cell_key) FROM results").fetchone()
            compacted = con.execute("SELECT count(*) FROM results_compacted").fetchone()
        finally:
            con.close()
        print(f"stored: {final:,} results, {distinct[0] if distinct else 0:,} distinct cells, "
              f"{compacted[0] if compacted else 0:,} compacted")  # fmt: skip
        if final != total or not distinct or distinct[0] != total:
            problems.append(f"expected {total:,} results, each once")
        # A plain duckdb.connect does not wait: meeting one of the writer's moments (opening or
        # closing the run, compacting) it raises "Could not set lock"; docs/sql.md says to
        # retry. That is counted and shown, not a problem; any other failure is.
        other = [f for f in shell_fail if "Could not set lock" not in f]
        if other or report_fail:
            problems.append("a reader failed during the run")
        if len(set(shell_seen)) < 2:
            problems.append("the readers never saw the run grow")
        if list((db.parent / "runs").glob("2*")):
            problems.append("shards left after the run")
        for problem in problems:
            print("PROBLEM:", problem)
        return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
