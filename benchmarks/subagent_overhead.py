"""Sub-agent overhead benchmark: what a ``spawn_agent`` nested run costs over the same number of
provider and tool calls in one loop, on the mock provider.

- ``delegated``: the parent spawns one sub-agent (which calls the calculator, then answers), then
  answers: 4 provider calls, 2 tool calls (spawn_agent, calculator), 2 runs.
- ``flat``: one run making 4 provider calls and 2 tool calls (calculator twice), then answering.

We report the median over several rounds of microseconds per sample for each, and their ratio
(ratios from one run compare on a noisy machine).

    nox -s perf              # or: python benchmarks/subagent_overhead.py --samples 200 --rounds 7
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from typing import Any

CALC = {"tool_calls": [{"name": "calculator", "arguments": {"expression": "17*23"}}]}
DELEGATED: list[dict[str, Any]] = [
    {"tool_calls": [{"name": "spawn_agent", "arguments": {"prompt": "Compute 17*23."}}]},
    CALC,
    {"text": "391"},
    {"text": "The helper says 391."},
]
FLAT: list[dict[str, Any]] = [CALC, CALC, CALC, {"text": "391"}]


async def one_round(turns: list[dict[str, Any]], samples: int) -> float:
    import harness

    t0 = time.perf_counter()
    for _ in range(samples):
        result = await harness.arun(
            "What is 17*23?",
            provider="mock",
            tools=["spawn_agent", "calculator"],
            provider_opts={"turns": turns},
            max_unproductive_iterations=0,
        )
        assert result.llm_calls == 4, result.halted_reason
    return (time.perf_counter() - t0) / samples * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    asyncio.run(one_round(DELEGATED, 20))  # warm up imports and caches
    delegated: list[float] = []
    flat: list[float] = []
    for _ in range(args.rounds):  # interleaved, so drift hits both alike
        delegated.append(asyncio.run(one_round(DELEGATED, args.samples)))
        flat.append(asyncio.run(one_round(FLAT, args.samples)))
    d, f = statistics.median(delegated), statistics.median(flat)
    print(json.dumps({
        "samples": args.samples, "rounds": args.rounds,
        "delegated_us_per_sample": round(d, 1), "flat_us_per_sample": round(f, 1),
        "ratio": round(d / f, 2),
    }))  # fmt: skip


if __name__ == "__main__":
    main()
