"""Report benchmark: build and render the report for 100,000 results, and gate them.

A synthetic run (default: 4 suites x 834 tasks x 3 modes x 2 providers x 5 epochs = 100,080
cells, 5% unknown costs) and a baseline run of the same cells are generated in memory with a
seeded generator, then timed, each phase once per round (the figure is the median over rounds):

- ``build``: ``build_report`` with the baseline diff (summary, finish reasons, pass@k, 6 paired
  comparisons x 2,000 task-bootstrap resamples over 3,336 tasks, per-cell diff);
- ``render``: ``render_markdown`` + ``render_html`` (4 inline SVG charts);
- ``write``: both files to a temporary folder;
- ``baseline``: ``baseline_save`` of the run to JSON; ``gate``: ``load_baseline`` + ``run_gate``.

Peak memory is reported twice: the Python/numpy allocations traced by ``tracemalloc`` during one
build + render (the report's own working set), and the process's peak RSS (``ru_maxrss``,
including the interpreter, pandas, scipy and the two input frames). Target (issue 6): the report
in under 3 s on the 2-core machine.

    nox -s perf        # or: python benchmarks/report_render.py --rounds 3
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from harness.report import (
    baseline_save,
    build_report,
    load_baseline,
    render_html,
    render_markdown,
    run_gate,
    write_report,
)

MODES = ("plan_and_solve", "react", "reflexion")
PROVIDERS = ("mock", "openai")
REASONS = np.array(["stop", "submitted", "error_max_turns", "error_no_progress", "error_halted"])


def synthetic_results(
    suites: int, tasks: int, epochs: int, seed: int, run_id: str, cost_scale: float = 1.0
) -> pd.DataFrame:
    """One row per cell, the results columns of docs/sql.md, plausible distributions."""
    rng = np.random.default_rng(seed)
    grid = pd.MultiIndex.from_product(
        [
            [f"suite{s}" for s in range(suites)],
            [f"task{t:04d}" for t in range(tasks)],
            MODES,
            PROVIDERS,
            range(epochs),
        ],
        names=["suite", "task_id", "mode", "provider", "epoch"],
    ).to_frame(index=False)
    n = len(grid)
    skill = grid["mode"].map({"plan_and_solve": 0.55, "react": 0.6, "reflexion": 0.66})
    difficulty = rng.normal(0, 0.15, size=suites * tasks)
    task_index = grid.groupby(["suite", "task_id"], sort=False).ngroup().to_numpy()
    p_pass = np.clip(skill.to_numpy() - difficulty[task_index], 0.02, 0.98)
    passed = rng.random(n) < p_pass
    iterations = rng.integers(1, 12, size=n)
    input_tokens = iterations * rng.integers(300, 900, size=n)
    output_tokens = iterations * rng.integers(20, 120, size=n)
    cost = (input_tokens * 2.5e-6 + output_tokens * 1e-5) * cost_scale
    cost[rng.random(n) < 0.05] = np.nan
    reasons = np.where(
        passed, REASONS[rng.integers(0, 2, size=n)], REASONS[rng.integers(2, 5, size=n)]
    )
    return grid.assign(
        run_id=run_id,
        model="model-1",
        passed=passed,
        score=passed.astype(float),
        grader_explanation="",
        finish_reason=reasons,
        category=np.where(passed, "success", "capacity"),
        iterations=iterations,
        tool_calls=iterations - 1,
        llm_calls=iterations,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cost_usd=cost,
        duration_ms=iterations * rng.integers(200, 2000, size=n),
        trace_id=[f"{i:032x}" for i in range(n)],
    )


def _timed(func: Callable[[], object]) -> float:
    start = time.perf_counter()
    func()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suites", type=int, default=4)
    parser.add_argument("--tasks", type=int, default=834, help="tasks per suite")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--resamples", type=int, default=2000)
    args = parser.parse_args(argv)

    run = synthetic_results(args.suites, args.tasks, args.epochs, seed=1, run_id="run")
    base = synthetic_results(
        args.suites, args.tasks, args.epochs, seed=2, run_id="base", cost_scale=0.95
    )
    print(
        f"results: {len(run):,} cells per run ({args.suites} suites x {args.tasks} tasks x "
        f"{len(MODES)} modes x {len(PROVIDERS)} providers x {args.epochs} epochs)"
    )

    def build() -> object:
        return build_report(run, base, n_resamples=args.resamples)

    report = build_report(run, base, n_resamples=args.resamples)  # warm-up (imports, caches)
    times: dict[str, list[float]] = {
        k: [] for k in ("build", "render", "write", "baseline", "gate")
    }
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        for _ in range(args.rounds):
            times["build"].append(_timed(build))
            times["render"].append(_timed(lambda: (render_markdown(report), render_html(report))))
            times["write"].append(_timed(lambda: write_report(report, out)))
            times["baseline"].append(_timed(lambda: baseline_save(run, out / "baseline.json")))
            times["gate"].append(
                _timed(lambda: run_gate(run, load_baseline(out / "baseline.json")))
            )
        sizes = {p.name: p.stat().st_size for p in out.iterdir()}

    tracemalloc.start()
    render_html(build_report(run, base, n_resamples=args.resamples))
    _, traced_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    for name, values in times.items():
        print(
            f"{name:>9}: median {statistics.median(values):6.3f} s  "
            f"(min {min(values):.3f}, max {max(values):.3f}, {len(values)} rounds)"
        )
    report_s = statistics.median(times["build"]) + statistics.median(times["render"])
    print(f"   report: build + render = {report_s:.3f} s (target < 3 s)")
    print(
        f"   memory: traced peak during build + render {traced_peak / 2**20:.0f} MiB; "
        f"process peak RSS {rss_kib / 1024:.0f} MiB"
    )
    print("    files: " + ", ".join(f"{k} {v / 1024:.0f} KiB" for k, v in sorted(sizes.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
