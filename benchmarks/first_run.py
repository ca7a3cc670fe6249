"""The first ``harness.arun`` of a process, with and without ``harness.warm_up()`` (issue 36):
each sample is a fresh interpreter that imports harness, optionally warms up, then times its
first and second mock run. Prints medians over ``--samples`` processes.

    python benchmarks/first_run.py [--samples 9]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

CHILD = """
import asyncio, json, sys, time
t0 = time.perf_counter()
import harness
t1 = time.perf_counter()
if sys.argv[1] == "warm":
    harness.warm_up()
t2 = time.perf_counter()
opts = {"turns": [{"text": "hi"}]}
async def main():
    a = time.perf_counter(); await harness.arun("hi", provider="mock", provider_opts=opts)
    b = time.perf_counter(); await harness.arun("hi", provider="mock", provider_opts=opts)
    c = time.perf_counter()
    return b - a, c - b
first, second = asyncio.run(main())
print(json.dumps({"import": t1 - t0, "warm_up": t2 - t1, "first": first, "second": second}))
"""


def sample(kind: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, kind], check=True, capture_output=True, text=True
    ).stdout
    result: dict[str, float] = json.loads(out.splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=9)
    args = parser.parse_args()
    print("| process | import harness | warm_up() | first arun | second arun |")
    print("|---|--:|--:|--:|--:|")
    for kind in ("cold", "warm"):
        runs = [sample(kind) for _ in range(args.samples)]
        med = {k: statistics.median(r[k] for r in runs) * 1000 for k in runs[0]}
        print(
            f"| {kind} | {med['import']:.0f} ms | {med['warm_up']:.1f} ms | "
            f"{med['first']:.1f} ms | {med['second']:.2f} ms |"
        )


if __name__ == "__main__":
    main()
