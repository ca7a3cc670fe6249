"""Check by simulation that the report's minimum detectable difference (MDD) is what it says.

The report states, for each paired comparison, the smallest pass-rate difference its sign test
finds with 80% power (``harness.report._power``), in the units of the difference it shows:
pass-rate points over tasks, each task's epochs averaged. This script simulates the bench's
designs and measures, with scipy's binomial distribution and nothing of the report but the MDD
it states:

* under the null (both modes alike), how often the sign test rejects at alpha 0.05;
* over a range of real differences, the power, and the MDD the report states on those data;
* the real difference that has 80% power, next to the MDD stated there (they should agree
  within 3 points), and the power at the stated MDD (80%, within 3 points).

The data-generating model: each task has a difficulty ``u ~ Normal(mu, sigma)`` on the logit
scale; mode A passes an epoch with probability ``expit(u)``, mode B with ``expit(u + theta)``;
epochs are independent draws given the task. A wide ``sigma`` makes most tasks pass or fail in
every epoch (the small models of the bench); a narrow one makes split tasks common. The real
pass-rate difference of ``theta`` is ``E[expit(u + theta) - expit(u)]``.

Run: ``python scripts/power_simulation.py`` (about a minute; ``--reps`` and ``--seed`` change
the work and the draw). ``tests/report/test_power_units.py`` runs a smaller version.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass

import numpy as np
from scipy.special import expit
from scipy.stats import binom

from harness.report._power import detectable_pass_rate_difference

ALPHA = 0.05
#: (tasks, epochs): every built-in task with one epoch (Qwen, greedy) and two (Gemma, sampled),
#: and a BFCL-sized comparison.
DESIGNS = ((99, 1), (99, 2), (26, 2))
#: (mu, sigma) of the task difficulties: a small model failing most tasks, nearly the same in
#: every epoch; and one whose epochs split more often.
POPULATIONS = ((-1.0, 2.5), (-0.5, 1.0))


@dataclass(frozen=True)
class Point:
    theta: float
    true_diff: float  # pass-rate points, 0..1
    power: float
    stated_mdd: float  # mean MDD the report states on these data (NaN: none reaches 80%)


@dataclass(frozen=True)
class Check:
    tasks: int
    epochs: int
    mu: float
    sigma: float
    null_rejections: float
    null_mdd: float
    diff_at_80: float  # the real difference with 80% power
    mdd_at_80: float  # the MDD stated on data with that difference
    power_at_stated: float  # the power at the real difference equal to the stated MDD

    @property
    def ok(self) -> bool:
        """The stated MDD is the real difference with 80% power, within 3 points."""
        return abs(self.diff_at_80 - self.mdd_at_80) <= 0.03


def true_difference(theta: float, mu: float, sigma: float) -> float:
    """``E[expit(u + theta) - expit(u)]`` for ``u ~ Normal(mu, sigma)`` (Gauss-Hermite)."""
    x, w = np.polynomial.hermite_e.hermegauss(80)
    u = mu + sigma * x
    return float(np.sum(w * (expit(u + theta) - expit(u))) / math.sqrt(2 * math.pi))


def sign_test_p(b_better: np.ndarray, untied: np.ndarray) -> np.ndarray:
    """Two-sided exact sign test (scipy's binomial): ``min(1, 2 P(X <= min(k, d - k)))``."""
    k = np.minimum(b_better, untied - b_better)
    p = np.minimum(1.0, 2.0 * binom.cdf(k, untied, 0.5))
    return np.where(untied > 0, p, 1.0)


def stated_mdd(tasks: int, diff: np.ndarray) -> float:
    """The MDD the report states for one comparison whose tasks differ by ``diff`` (B - A, each
    task's pass rate over its epochs), computed as ``harness.report._compare`` does."""
    b_better, a_better = diff[diff > 0], -diff[diff < 0]
    size_b = float(b_better.mean()) if len(b_better) else math.nan
    size_a = float(a_better.mean()) if len(a_better) else math.nan
    lead, trail = (size_b, size_a) if len(b_better) >= len(a_better) else (size_a, size_b)
    lead = lead if not math.isnan(lead) else (trail if not math.isnan(trail) else 1.0)
    trail = trail if not math.isnan(trail) else lead
    untied = len(b_better) + len(a_better)
    return detectable_pass_rate_difference(tasks, untied / tasks, lead, trail)


def simulate(
    tasks: int,
    epochs: int,
    theta: float,
    mu: float,
    sigma: float,
    reps: int,
    rng: np.random.Generator,
) -> tuple[float, float]:
    """(power, mean stated MDD) over ``reps`` simulated comparisons."""
    u = rng.normal(mu, sigma, size=(reps, tasks))
    a = rng.binomial(epochs, expit(u))
    b = rng.binomial(epochs, expit(u + theta))
    diff = (b - a) / epochs  # each task's pass-rate difference over its epochs
    untied = (diff != 0).sum(axis=1)
    b_better = (diff > 0).sum(axis=1)
    rejected = sign_test_p(b_better, untied) < ALPHA
    mdd = np.array([stated_mdd(tasks, row) for row in diff])
    known = mdd[~np.isnan(mdd)]
    return float(rejected.mean()), float(known.mean()) if len(known) else math.nan


def check(
    tasks: int, epochs: int, mu: float, sigma: float, *, reps: int, seed: int, step: float = 0.05
) -> tuple[Check, list[Point]]:
    rng = np.random.default_rng(seed)
    null_power, null_mdd = simulate(tasks, epochs, 0.0, mu, sigma, reps, rng)
    points: list[Point] = []
    theta = 0.0
    while True:
        theta += step
        power, mdd = simulate(tasks, epochs, theta, mu, sigma, reps, rng)
        points.append(Point(theta, true_difference(theta, mu, sigma), power, mdd))
        if power >= 0.9 or theta > 6:
            break
    powers = np.array([p.power for p in points])
    diffs = np.array([p.true_diff for p in points])
    mdds = np.array([p.stated_mdd for p in points])
    # Power rises with theta (up to simulation noise): interpolate where it crosses 80%, and
    # where the real difference crosses the stated MDD.
    diff_80 = float(np.interp(0.8, np.maximum.accumulate(powers), diffs))
    mdd_80 = float(np.interp(diff_80, diffs, mdds))
    gap = diffs - mdds
    k = int(np.argmax(gap >= 0)) if (gap >= 0).any() else len(points) - 1
    if k == 0:
        power_at = float(powers[0])
    else:
        f = -gap[k - 1] / (gap[k] - gap[k - 1])
        power_at = float(powers[k - 1] + f * (powers[k] - powers[k - 1]))
    out = Check(tasks, epochs, mu, sigma, null_power, null_mdd, diff_80, mdd_80, power_at)
    return out, points


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=4000, help="comparisons per point")
    parser.add_argument("--seed", type=int, default=20261127)
    args = parser.parse_args(argv)
    print(
        "| tasks | epochs | difficulty (mu, sigma) | null: rejections | null: stated MDD | "
        "real Δ with 80% power | stated MDD there | power at the stated MDD | within ±3 |"
    )
    print("|---:|---:|---|---:|---:|---:|---:|---:|---|")
    ok = True
    for tasks, epochs in DESIGNS:
        for mu, sigma in POPULATIONS:
            c, _ = check(tasks, epochs, mu, sigma, reps=args.reps, seed=args.seed)
            ok &= c.ok
            print(
                f"| {tasks} | {epochs} | ({mu:g}, {sigma:g}) | {c.null_rejections:.1%} | "
                f"{c.null_mdd * 100:.1f} pts | {c.diff_at_80 * 100:.1f} pts | "
                f"{c.mdd_at_80 * 100:.1f} pts | {c.power_at_stated:.1%} | "
                f"{'yes' if c.ok else 'NO'} |"
            )
    print(f"(alpha {ALPHA}, {args.reps} simulated comparisons per point, seed {args.seed})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
