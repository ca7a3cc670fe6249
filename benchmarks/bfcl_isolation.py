"""BFCL verdicts under concurrency (issue 34, item 4): no flip in 10,000 gradings.

``mpmath``'s precision is global to a process. Before, BFCL's MathAPI tool calls and BFCL's
multi-turn gradings ran in the harness's process under two different locks: 5 of 1,462
``logarithm(precision=3000)`` results came back at 18 digits, and grading the exact ground truth
failed 48 times in 12,929 while another cell's MathAPI calls ran. Now both run in BFCL's worker
processes. This script grades the ground truths of the multi-turn entries that use MathAPI
(``--gradings`` in all, from ``--threads`` threads at once) while an event loop keeps calling
``logarithm(value=7, base=3, precision=3000)`` through the BFCL tool, and counts the gradings
that fail (flips: every ground truth passes alone) and the results with too few digits.

    python benchmarks/bfcl_isolation.py --gradings 10000

A line every ``--every`` gradings says how far it got; Ctrl-C (or SIGTERM) stops it and prints
the figure for the gradings finished so far.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import re
import signal
import sys
import threading
import time

from harness.grading._bfcl_checker import grade_multi_turn
from harness.suites import _bfcl_data as data
from harness.suites._bfcl_tools import build_tools


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gradings", type=int, default=10_000)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--every", type=int, default=250, help="a progress line every N gradings")
    args = parser.parse_args()
    entries = [
        e
        for category in ("multi_turn_base", "multi_turn_long_context")
        for e in data.load_category(category)
        if "MathAPI" in e.involved_classes
    ]
    jobs = []
    for e in entries:
        turns = [
            [[(c.name, c.arguments)] for step in turn for c in step]
            for turn in data.ground_truth_calls(e)
        ]
        jobs.append((e, [f["name"] for f in e.all_functions()], turns))
    counter = itertools.count()
    flips: list[str] = []
    done = threading.Event()
    graded = 0
    tally = threading.Lock()
    started = time.monotonic()

    def grader() -> None:
        nonlocal graded
        while not done.is_set() and (n := next(counter)) < args.gradings:
            e, names, turns = jobs[n % len(jobs)]
            verdict = grade_multi_turn(e.raw, names, e.ground_truth, turns)
            with tally:
                graded += 1
                if not verdict.passed:
                    flips.append(f"{e.id}: {verdict.explanation[:200]}")
                if graded % args.every == 0:
                    took = time.monotonic() - started
                    print(
                        f"  {graded:,} gradings, {calls:,} calls, {took:.0f} s:"
                        f" {len(flips)} flips, {len(short)} short",
                        flush=True,
                    )

    short: list[str] = []
    calls = 0

    async def caller() -> None:
        nonlocal calls
        state = build_tools(entries[0]).state
        assert state is not None
        while not done.is_set():
            text = await state.call("logarithm", {"value": 7, "base": 3, "precision": 3000})
            digits = len(re.sub(r"\D", "", text.split("1.", 1)[-1]))
            calls += 1
            if digits < 2990:
                short.append(text[:80])

    def loop() -> None:
        asyncio.run(caller())

    def stop(signum: int, frame: object) -> None:
        done.set()  # the gradings running now finish; no new one starts

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    threads = [threading.Thread(target=grader) for _ in range(args.threads)]
    tool = threading.Thread(target=loop)
    tool.start()
    for t in threads:
        t.start()
    for t in threads:
        while t.is_alive():
            t.join(0.5)
    done.set()
    tool.join()
    took = time.monotonic() - started
    print(
        f"{graded:,} gradings of {len(jobs)} MathAPI ground truths ({args.threads} threads) "
        f"and {calls:,} logarithm(precision=3000) calls at once, {took:.0f} s: "
        f"{len(flips)} verdict flips, {len(short)} short results"
    )
    for line in flips[:5] + short[:5]:
        print("  ", line)
    if graded < args.gradings:
        print(f"stopped early: {graded:,} of {args.gradings:,} gradings", file=sys.stderr)


if __name__ == "__main__":
    main()
