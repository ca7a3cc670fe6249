"""Telemetry overhead benchmark: the kernel_overhead workload traced four ways.

The 200-sample mock workload of ``kernel_overhead.py`` (3 provider calls and 2 tool calls per
sample: 9 spans and a handful of span events) is run, rounds interleaved, with:

- ``off``: no tracer provider (the facade adds no subscriber at all);
- ``memory``: ``configure_tracing(in_memory=True)`` (SDK: SimpleSpanProcessor +
  InMemorySpanExporter);
- ``file-sdk``: ``configure_tracing(file=..., sdk=True)`` (SDK: BatchSpanProcessor + the
  JSON-lines span file), with a flush at the end of each round counted in its time, so the
  background export is paid for;
- ``file``: ``configure_tracing(file=...)``, the default for a span file alone: the light tracer
  (``harness.telemetry._light``), same lines, written at the end of each run.

It reuses kernel_overhead's ``harness_round`` unchanged: the traced variants wrap
``harness.arun`` to pass ``tracer_provider=``. Reported, as medians over the rounds: µs per
provider call (the kernel_overhead figure, wall clock) for each variant,
what telemetry adds over ``off``, the ratio to ``off``, and process CPU time per call (less
sensitive to other load on the machine). Target (issue 4): < 150 µs per provider call with the
file exporter (``file``, the default). Both span files are checked to hold every span.

    nox -s perf        # or: python benchmarks/telemetry_overhead.py --samples 200 --rounds 7
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kernel_overhead import CALLS_PER_SAMPLE, TURNS, harness_round

import harness
from harness.telemetry import TracingHandle, configure_tracing

TARGET_US_PER_CALL = 150.0
__all__ = ["main"]


@contextmanager
def traced(handle: TracingHandle | None) -> Iterator[None]:
    """Make harness.arun (as harness_round calls it) trace to ``handle``'s provider."""
    original = harness.arun
    if handle is not None:
        harness.arun = functools.partial(original, tracer_provider=handle.provider)  # type: ignore[assignment]
    try:
        yield
    finally:
        harness.arun = original  # type: ignore[assignment]


def timed_round(samples: int, handle: TracingHandle | None) -> tuple[float, float]:
    """Wall and process-CPU seconds for one round, the span export included."""
    t0, c0 = time.perf_counter(), time.process_time()
    with traced(handle):
        asyncio.run(harness_round(samples))
    if handle is not None:
        handle.force_flush(timeout_s=60)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    if handle is not None and handle.memory is not None:
        handle.memory.clear()
    return wall, cpu


VARIANTS = {
    "off": "telemetry off",
    "memory": "in-memory (SDK)",
    "file-sdk": "file (SDK batch)",
    "file": "file (light)",
}


def measure(samples: int, rounds: int, tmp: Path) -> dict[str, Any]:
    files = {"file-sdk": tmp / "sdk.jsonl", "file": tmp / "light.jsonl"}
    variants: dict[str, TracingHandle | None] = {
        "off": None,
        "memory": configure_tracing(in_memory=True),
        "file-sdk": configure_tracing(file=files["file-sdk"], sdk=True),
        "file": configure_tracing(file=files["file"]),
    }
    light = variants["file"]
    assert light is not None
    assert light.light
    for handle in variants.values():  # warm up imports and caches
        timed_round(20, handle)
    wall: dict[str, list[float]] = {name: [] for name in variants}
    cpu: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(rounds):  # interleaved so machine noise hits every variant alike
        for name, handle in variants.items():
            w, c = timed_round(samples, handle)
            wall[name].append(w)
            cpu[name].append(c)
    memory = variants["memory"]
    assert memory is not None
    assert memory.memory is not None
    with traced(memory):
        asyncio.run(harness_round(1))
    spans_per_sample = len(memory.memory.get_finished_spans())
    for handle in variants.values():
        if handle is not None:
            handle.shutdown()
    lines = {k: sum(1 for _ in f.open(encoding="utf-8")) for k, f in files.items()}

    def per_call(times: dict[str, list[float]]) -> dict[str, float]:
        return {
            k: round(statistics.median(v) / samples / CALLS_PER_SAMPLE * 1e6, 1)
            for k, v in times.items()
        }

    call_wall, call_cpu = per_call(wall), per_call(cpu)
    return {
        "samples": samples,
        "rounds": rounds,
        "calls_per_sample": CALLS_PER_SAMPLE,
        "turns": len(TURNS),
        "spans_per_sample": spans_per_sample,
        "span_file_lines": lines,  # per file variant
        "span_file_expected": spans_per_sample * (20 + rounds * samples),
        "us_per_call": call_wall,
        "added_us_per_call": {k: round(v - call_wall["off"], 1) for k, v in call_wall.items()},
        "ratio_to_off": {k: round(v / call_wall["off"], 2) for k, v in call_wall.items()},
        "cpu_us_per_call": call_cpu,
        "target_us_per_call": TARGET_US_PER_CALL,
        "within_target": call_wall["file"] < TARGET_US_PER_CALL,
        "python": sys.version.split()[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        f = measure(args.samples, args.rounds, Path(tmp))
    if args.json:
        print(json.dumps(f, indent=2))
        return
    print(
        f"telemetry overhead, {f['samples']} samples x {f['rounds']} rounds (medians), "
        f"{f['calls_per_sample']} provider calls and {f['spans_per_sample']} spans per sample"
    )
    print("                      us/call (wall)   added by telemetry   ratio   us/call (CPU)")
    for name, label in VARIANTS.items():
        added = f"{f['added_us_per_call'][name]:+.1f}" if name != "off" else "-"
        print(
            f"  {label:<17} {f['us_per_call'][name]:>14.1f}   {added:>18}   "
            f"{f['ratio_to_off'][name]:>4.2f}x   {f['cpu_us_per_call'][name]:>12.1f}"
        )
    for name, lines in f["span_file_lines"].items():
        if lines != f["span_file_expected"]:
            print(
                f"  WARNING: the {VARIANTS[name]} span file has {lines} lines, "
                f"expected {f['span_file_expected']} (spans dropped)"
            )
    verdict = "within target" if f["within_target"] else "OVER TARGET"
    print(
        f"  target: < {TARGET_US_PER_CALL:g} us per provider call with the file exporter "
        f"-> {f['us_per_call']['file']:.1f}: {verdict}"
    )


if __name__ == "__main__":
    main()
