"""End-to-end throughput and peak memory of ``harness run`` on the built-in mock cells.

Each size runs ``harness run suites/*.yaml --providers mock --epochs E`` (every suite but
``code``) in a fresh process (the local
executor, tracing to the default span file, results and spans stored as shards and compacted at
the end: everything a real run does), and reports:

- cells/s over the matrix (the figure ``harness run`` prints) and over the whole process (imports,
  opening the store, compaction included);
- CPU ms per cell (user + system of the process and its threads: steadier than wall time on a
  loaded machine);
- peak RSS of the process (``ru_maxrss``);
- that every cell and span reached the database.

    python benchmarks/bench_throughput.py                       # 2,385 / 11,925 / 50,085 cells
    python benchmarks/bench_throughput.py --sizes 2000 --rounds 3
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parent.parent
#: The built-in suites but ``code`` (its cells run pytest in the sandbox twice, ~0.8 s each: a
#: benchmark of the sandbox, not of the run; see docs/performance.md).
SUITES = [str(p) for p in sorted((ROOT / "suites").glob("*.yaml")) if p.name != "code.yaml"]
CELLS_PER_EPOCH = 265  # SUITES x 3 modes on the mock provider


def run_once(epochs: int, work: Path) -> dict[str, float]:
    db = work / "reports" / "harness.duckdb"
    cmd = [
        sys.executable, "-m", "harness.cli", "run", *SUITES,
        "--providers", "mock", "--epochs", str(epochs), "--db", str(db), "--no-progress",
    ]  # fmt: skip
    env = {**os.environ, "TMPDIR": str(work)}
    started = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    assert proc.stdout is not None
    out = proc.stdout.read()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"harness run exited {code}:\n{out}")
    match = re.search(r"(\d+)/(\d+) cells.*?\(([\d.]+) cells/s\), (\d+) spans", out, re.S)
    if match is None:
        raise SystemExit(f"cannot read the summary:\n{out}")
    cells, spans = int(match[1]), int(match[4])
    con = duckdb.connect(str(db), read_only=True)
    try:
        got = con.execute("SELECT count(*) FROM results").fetchone()
        stored_spans = con.execute("SELECT count(*) FROM spans").fetchone()
    finally:
        con.close()
    assert got is not None
    assert got[0] == cells, f"{got} results stored for {cells} cells"
    assert stored_spans is not None
    assert stored_spans[0] == spans
    left = list((db.parent / "runs").glob("2*"))
    assert not left, f"run folders left after compaction: {left}"
    return {
        "cells": cells,
        "spans": spans,
        "matrix_cells_s": float(match[3]),
        "process_cells_s": cells / wall,
        "wall_s": wall,
        "cpu_ms_per_cell": (usage.ru_utime + usage.ru_stime) * 1000 / cells,
        "peak_rss_mb": usage.ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", default="2385,11925,50085", help="Cells per run, comma-separated"
    )
    parser.add_argument("--rounds", type=int, default=1, help="Runs per size (median reported)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"harness run on the mock cells, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    header = (
        f"{'cells':>7} {'matrix c/s':>11} {'process c/s':>12} {'wall s':>7} "
        f"{'CPU ms/cell':>12} {'peak RSS MB':>12} {'spans':>9}"
    )
    print(header)
    for size in sizes:
        epochs = max(1, math.ceil(size / CELLS_PER_EPOCH))
        rounds = []
        for _ in range(args.rounds):
            work = Path(tempfile.mkdtemp(prefix="harness-bench-"))
            try:
                rounds.append(run_once(epochs, work))
            finally:
                shutil.rmtree(work, ignore_errors=True)

        def med(key: str, rounds: list[dict[str, float]] = rounds) -> float:
            return statistics.median(r[key] for r in rounds)

        print(
            f"{int(med('cells')):>7} {med('matrix_cells_s'):>11.1f} "
            f"{med('process_cells_s'):>12.1f} "
            f"{med('wall_s'):>7.1f} {med('cpu_ms_per_cell'):>12.2f} {med('peak_rss_mb'):>12.1f} "
            f"{int(med('spans')):>9}",
            flush=True,
        )
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
