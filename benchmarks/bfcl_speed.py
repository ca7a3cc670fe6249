"""BFCL benchmark (issue 26, item 4): loading BFCL's data and grading its ground truths.

Each round runs in a fresh Python process (the data is cached per process and the checkers'
imports happen once), timed inside it, so interpreter start-up is not counted:

- ``load``: import ``harness.suites._bfcl_data`` and load all 15 categories (4,291 entries:
  questions, possible answers, multi-turn function docs), ``bfcl_eval``'s import included.
  Target: under 2 s.
- ``multi-turn``: grade the 800 multi-turn ground truths (base, miss_func, miss_param,
  long_context; each played as the model's calls, one per step) with the harness's ``bfcl``
  grading path (BFCL's ``multi_turn_checker``, per-grading model name, globals purged,
  precision restored); the checker's first import is included. Target: under 10 s.
- ``ast``: the same for the 3,491 AST and (ir)relevance ground truths (``ast_checker``).

The figure is the median over rounds (min and max beside it); the pass counts are checked (all
800 multi-turn entries pass; every AST entry but the 4 unsatisfiable ones).

    nox -s perf        # or: python benchmarks/bfcl_speed.py --rounds 5
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from typing import Any

LOAD_TARGET_S = 2.0
MULTI_TURN_TARGET_S = 10.0
#: AST entries no answer can pass (BFCL's own ground truth fails its checker).
UNSATISFIABLE = 4


def child_load() -> dict[str, Any]:
    start = time.perf_counter()
    from harness.suites._bfcl_data import CATEGORIES, entries

    n = len(entries(CATEGORIES))
    return {"seconds": time.perf_counter() - start, "entries": n}


def child_multi_turn() -> dict[str, Any]:
    from harness.grading._bfcl_checker import grade_multi_turn
    from harness.suites._bfcl_data import MULTI_TURN_CATEGORIES, entries, ground_truth_calls

    chosen = entries(MULTI_TURN_CATEGORIES)
    plays = [[[[(c.name, c.arguments) for c in step] for step in turn]
              for turn in ground_truth_calls(e)] for e in chosen]  # fmt: skip
    start = time.perf_counter()
    passed = 0
    for e, turns in zip(chosen, plays, strict=True):
        names = [f["name"] for f in e.all_functions()]
        passed += grade_multi_turn(e.raw, names, e.ground_truth, turns).passed
    return {"seconds": time.perf_counter() - start, "entries": len(chosen), "passed": passed}


def child_ast() -> dict[str, Any]:
    from harness.grading._bfcl_checker import grade_ast
    from harness.suites._bfcl_data import AST_CATEGORIES, entries, ground_truth_calls

    chosen = entries(AST_CATEGORIES)
    # One step of the ground truth's calls; irrelevance entries have none (no call passes).
    first = [next(iter(ground_truth_calls(e)[0]), []) for e in chosen]
    plays = [[(c.name, c.arguments) for c in calls] for calls in first]
    start = time.perf_counter()
    passed = 0
    for e, calls in zip(chosen, plays, strict=True):
        passed += grade_ast(e.category, e.functions, e.ground_truth, calls).passed
    return {"seconds": time.perf_counter() - start, "entries": len(chosen), "passed": passed}


PHASES = {"load": child_load, "multi-turn": child_multi_turn, "ast": child_ast}


def _round(phase: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", phase],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--child", choices=sorted(PHASES), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(PHASES[args.child]()))
        return 0
    ok = True
    print(f"BFCL ({args.rounds} rounds, each in a fresh process; median [min-max])")
    for phase, target in (("load", LOAD_TARGET_S), ("multi-turn", MULTI_TURN_TARGET_S),
                          ("ast", None)):  # fmt: skip
        rounds = [_round(phase) for _ in range(args.rounds)]
        times = [r["seconds"] for r in rounds]
        last = rounds[-1]
        counts = f"{last['entries']:,} entries"
        if "passed" in last:
            counts += f", {last['passed']:,} passed"
            expected = last["entries"] - (UNSATISFIABLE if phase == "ast" else 0)
            if last["passed"] != expected:
                counts += f" (expected {expected:,})"
                ok = False
        verdict = ""
        if target is not None:
            met = statistics.median(times) < target
            ok = ok and met
            verdict = f"  target < {target:g} s: {'met' if met else 'MISSED'}"
        print(
            f"  {phase:<10} {statistics.median(times):6.2f} s "
            f"[{min(times):.2f}-{max(times):.2f}]  ({counts}){verdict}"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
