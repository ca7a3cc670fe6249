"""Ray executor benchmark: what it adds per cell, and how a latency-bound run scales with workers.

1. Overhead: the built-in suites' mock cells (3 modes x ``--epochs``), run by the local asyncio
   runner and by the Ray executor with one worker at the same concurrency, both tracing to a
   span file and storing nothing (the store path is the same for both). Added per cell =
   (Ray time - local time) / cells, with the Ray time counted from the moment the actors are up
   (a cluster is started once per run; its start-up is shown apart).
2. Scaling: cells whose every mock call sleeps ``latency_s`` (0.2 s; one tool call and one
   answer per cell, so 0.4 s a cell), run by 1 and by 4 Ray workers at the same concurrency
   per worker; throughput in cells/s from the moment the actors are up.

Ray runs on an in-process local cluster (``ray.init(num_cpus=...)``) started once, before
anything is timed. Variants are interleaved over ``--repeats`` and medians reported.

    python benchmarks/bench_ray.py [--epochs 5] [--concurrency 4] [--latency-cells 160]
                                   [--repeats 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import ray

from harness.bench._matrix import Cell, expand
from harness.bench._ray_executor import RayOptions, RayRunner
from harness.bench._runner import CellOutcome, MatrixSummary, Runner, RunnerOptions
from harness.suites._load import load_suites
from harness.suites._suite import Suite
from harness.telemetry._setup import configure_tracing

ROOT = Path(__file__).resolve().parents[1]


def _drop(outcome: CellOutcome) -> None:
    """The sink: both executors hand cells to the same store path, so it is left out."""


def run_local(cells: list[Cell], concurrency: int, work: Path) -> tuple[float, MatrixSummary]:
    tracing = configure_tracing(file=work / f"local-{time.monotonic_ns()}.jsonl")
    opts = RunnerOptions(concurrency=concurrency, tracer_provider=tracing.tracer_provider)
    started = time.perf_counter()
    summary = asyncio.run(Runner(opts, _drop).run(cells))
    tracing.shutdown()  # the span file written, as the Ray run's spans are when it returns
    return time.perf_counter() - started, summary


def run_ray(
    suites: list[Suite], cells: list[Cell], concurrency: int, workers: int, work: Path
) -> tuple[float, float, MatrixSummary]:
    """(seconds from actors up to the end, seconds of actor start-up, summary)."""
    runner = RayRunner(
        RunnerOptions(concurrency=concurrency),
        _drop,
        suites=suites,
        ray_options=RayOptions(workers=workers),
        trace_file=work / f"ray-{time.monotonic_ns()}.jsonl",
    )
    started = time.perf_counter()
    summary = asyncio.run(runner.run(cells))
    ended = time.perf_counter()
    assert runner.ready_at is not None
    return ended - runner.ready_at, runner.ready_at - started, summary


def latency_suite(folder: Path, n: int, latency_s: float) -> Path:
    tasks = "".join(
        textwrap.dedent(
            f"""
              - id: t{i}
                prompt: "What is {i}+1?"
                expect: {{kind: contains, value: "{i + 1}"}}
                mock:
                  latency_s: {latency_s}
                  turns:
                    - tool_calls: [{{name: calculator, arguments: {{expression: "{i}+1"}}}}]
                    - text: "{i + 1}"
            """
        )
        for i in range(n)
    )
    path = folder / "latency.yaml"
    path.write_text(
        "suite: latency\ndefaults: {tools: [calculator], max_iterations: 4}\ntasks:" + tasks,
        encoding="utf-8",
    )
    return path


def _check(summary: MatrixSummary, n: int) -> None:
    if summary.done != n or summary.errored:
        sys.exit(f"benchmark run incomplete: {summary.done}/{n} cells, {summary.errored} errored")


def overhead(args: argparse.Namespace, work: Path) -> None:
    suites = load_suites([ROOT / "suites"])
    cells = expand(suites, ["react", "plan_and_solve", "reflexion"], ["mock"], args.epochs)
    n = len(cells)
    run_local(cells[: args.concurrency * 4], args.concurrency, work)  # warm imports and caches
    local, remote, startup = [], [], []
    for _ in range(args.repeats):
        t, s = run_local(cells, args.concurrency, work)
        _check(s, n)
        local.append(t)
        t, up, s = run_ray(suites, cells, args.concurrency, 1, work)
        _check(s, n)
        remote.append(t)
        startup.append(up)
    lt, rt = statistics.median(local), statistics.median(remote)
    print(f"\n## overhead: {n} mock cells, concurrency {args.concurrency}, 1 Ray worker")
    print("| executor | median s | cells/s |")
    print("|---|---|---|")
    print(f"| local | {lt:.2f} | {n / lt:.0f} |")
    print(f"| ray, 1 worker (from actors up) | {rt:.2f} | {n / rt:.0f} |")
    print(
        f"\nadded per cell: **{(rt - lt) / n * 1000:.2f} ms** (median of {args.repeats}); "
        f"actor start-up {statistics.median(startup):.2f} s per run "
        f"({statistics.median(startup) / n * 1000:.2f} ms per cell over this run)"
    )


def scaling(args: argparse.Namespace, work: Path) -> None:
    suites = load_suites([latency_suite(work, args.latency_cells, args.latency_s)])
    cells = expand(suites, ["react"], ["mock"], 1)
    n = len(cells)
    rates: dict[int, list[float]] = {1: [], 4: []}
    ups: dict[int, list[float]] = {1: [], 4: []}
    for _ in range(args.repeats):
        for workers in (1, 4):
            t, up, s = run_ray(suites, cells, args.concurrency, workers, work)
            _check(s, n)
            rates[workers].append(n / t)
            ups[workers].append(up)
    one, four = statistics.median(rates[1]), statistics.median(rates[4])
    print(
        f"\n## scaling: {n} cells, latency_s {args.latency_s} (2 calls a cell), "
        f"concurrency {args.concurrency} per worker"
    )
    print("| workers | cells/s (from actors up) | actor start-up s |")
    print("|---|---|---|")
    for w in (1, 4):
        print(f"| {w} | {statistics.median(rates[w]):.1f} | {statistics.median(ups[w]):.2f} |")
    print(f"\n4 workers / 1 worker: **{four / one:.2f}x**")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--latency-cells", type=int, default=160)
    parser.add_argument("--latency-s", type=float, default=0.2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cpus", type=int, default=4, help="CPUs the local Ray cluster offers")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    ray.init(
        address="local", num_cpus=args.cpus, include_dashboard=False, log_to_driver=False,
        logging_level="warning",
    )  # fmt: skip
    print(f"ray {ray.__version__}: local cluster up in {time.perf_counter() - started:.1f} s")
    try:
        with tempfile.TemporaryDirectory(prefix="bench-ray-") as tmp:
            overhead(args, Path(tmp))
            scaling(args, Path(tmp))
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
