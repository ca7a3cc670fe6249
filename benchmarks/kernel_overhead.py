"""Kernel overhead benchmark: 200 scripted samples through harness.arun on the mock provider.

Each sample makes 3 provider calls and 2 tool calls (calculator twice, then a text answer). We
report the median over several rounds of: microseconds per sample, per provider call, and the
same for a plain-Python baseline doing the equivalent work (so ratios from one run can be
compared on a noisy machine); peak RSS; and the cost of `import harness` in a fresh interpreter.

    nox -s perf              # or: python benchmarks/kernel_overhead.py --samples 200 --rounds 7
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import subprocess
import sys
import time
from typing import Any

TURNS: list[dict[str, Any]] = [
    {"tool_calls": [{"name": "calculator", "arguments": {"expression": "17*23"}}]},
    {"tool_calls": [{"name": "calculator", "arguments": {"expression": "391+4"}}]},
    {"text": "395", "usage": {"input_tokens": 50, "output_tokens": 2}},
]
CALLS_PER_SAMPLE = 3


async def harness_round(samples: int) -> float:
    import harness

    t0 = time.perf_counter()
    for _ in range(samples):
        result = await harness.arun(
            "What is 17*23+4?",
            provider="mock",
            tools=["calculator"],
            provider_opts={"turns": TURNS},
        )
        if result.text != "395" or result.llm_calls != CALLS_PER_SAMPLE:
            raise RuntimeError(f"unexpected result: {result!r}")
    return time.perf_counter() - t0


async def baseline_round(samples: int) -> float:
    """The same control flow in plain Python: a scripted 'model', a dict of tools, a list."""

    async def model(i: int) -> dict[str, Any]:
        return TURNS[i]

    async def calculator(expression: str) -> str:
        a, op, b = expression.partition("*") if "*" in expression else expression.partition("+")
        return str(int(a) * int(b) if op == "*" else int(a) + int(b))

    t0 = time.perf_counter()
    for _ in range(samples):
        messages: list[dict[str, Any]] = [{"role": "user", "content": "What is 17*23+4?"}]
        for i in range(CALLS_PER_SAMPLE):
            turn = await model(i)
            messages.append({"role": "assistant", **turn})
            for call in turn.get("tool_calls", []):
                messages.append({"role": "tool", "content": await calculator(**call["arguments"])})
        assert messages[-1]["text"] == "395"
    return time.perf_counter() - t0


def import_time(repeats: int = 5) -> float:
    """Median seconds for `import harness` in a fresh interpreter, minus bare startup."""
    code = "import time; t=time.perf_counter(); import {mod}; print(time.perf_counter()-t)"
    times = []
    for _ in range(repeats):
        out = subprocess.run(
            [sys.executable, "-c", code.format(mod="harness")],
            check=True,
            capture_output=True,
            text=True,
        )
        times.append(float(out.stdout))
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()

    asyncio.run(harness_round(20))  # warm up imports and caches
    h_rounds, b_rounds = [], []
    for _ in range(args.rounds):  # interleave so machine noise hits both alike
        h_rounds.append(asyncio.run(harness_round(args.samples)))
        b_rounds.append(asyncio.run(baseline_round(args.samples)))
    per_sample = statistics.median(h_rounds) / args.samples * 1e6
    base_sample = statistics.median(b_rounds) / args.samples * 1e6
    figures = {
        "samples": args.samples,
        "rounds": args.rounds,
        "harness_us_per_sample": round(per_sample, 1),
        "harness_us_per_call": round(per_sample / CALLS_PER_SAMPLE, 1),
        "baseline_us_per_sample": round(base_sample, 1),
        "baseline_us_per_call": round(base_sample / CALLS_PER_SAMPLE, 1),
        "ratio_harness_to_baseline": round(per_sample / base_sample, 1),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "import_harness_s": round(import_time(), 3),
        "python": sys.version.split()[0],
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"kernel overhead, {args.samples} samples x {args.rounds} rounds (median), telemetry off")
    print(
        f"  harness.arun : {figures['harness_us_per_sample']:>9} us/sample  "
        f"{figures['harness_us_per_call']:>8} us/provider call"
    )
    print(
        f"  plain python : {figures['baseline_us_per_sample']:>9} us/sample  "
        f"{figures['baseline_us_per_call']:>8} us/provider call"
    )
    print(f"  ratio        : {figures['ratio_harness_to_baseline']}x")
    print(f"  peak RSS     : {figures['peak_rss_mib']} MiB")
    print(f"  import harness: {figures['import_harness_s']} s")


if __name__ == "__main__":
    main()
