"""Null simulations through the public pandas API: when modes do not differ, at most 5% of
reports may claim any pass-rate difference and at most 5% any cost difference (family-wise,
over every pair and both kinds of claim), whether epochs are identical (cassette replay,
temperature 0), independent, or absent. And a real difference is still found."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from harness.report import paired_comparisons, summary_table

#: Simulations: hundreds of reports per case (about two minutes in all on two cores).
pytestmark = pytest.mark.slow

REPORTS = 100
MODES = ["m0", "m1", "m2", "m3"]


def simulate(
    rng: np.random.Generator, tasks: int, epochs: int, modes: list[str], *, identical: bool,
    effect: float = 0.0, cost_effect: float = 1.0,
) -> pd.DataFrame:  # fmt: skip
    """One report's results: every task has its own pass probability and typical cost; modes
    are exchangeable unless ``effect`` (added pass probability for the last mode) or
    ``cost_effect`` (its cost multiplier) say otherwise."""
    rows = []
    p_task = rng.beta(1.2, 1.2, size=tasks)
    cost_task = rng.lognormal(mean=-6.0, sigma=1.0, size=tasks)
    for mode in modes:
        last = mode == modes[-1]
        for t in range(tasks):
            p = min(1.0, p_task[t] + (effect if last else 0.0))
            draws = 1 if identical else epochs
            passed = rng.random(draws) < p
            cost = cost_task[t] * rng.lognormal(0.0, 0.5, size=draws)
            cost *= cost_effect if last else 1.0
            for e in range(epochs):
                k = 0 if identical else e
                rows.append(
                    {"suite": "sim", "task_id": f"t{t}", "mode": mode, "provider": "p",
                     "epoch": e, "passed": bool(passed[k]), "cost_usd": float(cost[k])}
                )  # fmt: skip
    return pd.DataFrame(rows)


def claim_rates(
    tasks: int, epochs: int, modes: list[str], *, identical: bool
) -> tuple[float, float]:
    rng = np.random.default_rng(20261124)
    pass_claims = cost_claims = 0
    for _ in range(REPORTS):
        df = simulate(rng, tasks, epochs, modes, identical=identical)
        c = paired_comparisons(df, n_resamples=50)
        pass_claims += bool(c["verdict"].str.contains("passes (?:more|less) often").any())
        cost_claims += bool(c["cost_verdict"].str.contains("costs (?:more|less)$").any())
    return pass_claims / REPORTS, cost_claims / REPORTS


@pytest.mark.timeout(600)  # ~0.2 s per simulated report on 2 busy cores
@pytest.mark.parametrize(
    ("tasks", "epochs", "modes", "identical"),
    [
        pytest.param(20, 3, MODES, True, id="20-tasks-3-identical-epochs-4-modes"),
        pytest.param(20, 3, MODES, False, id="20-tasks-3-independent-epochs-4-modes"),
        pytest.param(8, 1, MODES[:2], False, id="8-tasks-1-epoch-2-modes"),
    ],
)
def test_null_reports_rarely_claim_a_difference(
    tasks: int, epochs: int, modes: list[str], identical: bool
) -> None:
    pass_rate, cost_rate = claim_rates(tasks, epochs, modes, identical=identical)
    assert pass_rate <= 0.05, f"{pass_rate:.1%} of null reports claimed a pass-rate difference"
    assert cost_rate <= 0.05, f"{cost_rate:.1%} of null reports claimed a cost difference"


@pytest.mark.timeout(300)
def test_a_real_difference_is_found() -> None:
    rng = np.random.default_rng(7)
    found_pass = found_cost = 0
    for _ in range(20):
        df = simulate(rng, 40, 2, ["a", "b"], identical=False, effect=0.5, cost_effect=3.0)
        c = paired_comparisons(df, n_resamples=50).iloc[0]
        found_pass += c["verdict"].endswith("b passes more often than a")
        found_cost += c["cost_verdict"].endswith("b costs more")
    assert found_pass >= 18
    assert found_cost >= 18


def test_summary_interval_counts_tasks_not_epochs() -> None:
    rng = np.random.default_rng(1)
    one = simulate(rng, 10, 1, ["a"], identical=True)
    five = pd.concat([one.assign(epoch=e) for e in range(5)], ignore_index=True)
    s1, s5 = summary_table(one).iloc[0], summary_table(five).iloc[0]
    assert (s5["n"], s5["tasks"]) == (50, 10)
    assert (s5["pass_ci_low"], s5["pass_ci_high"]) == (s1["pass_ci_low"], s1["pass_ci_high"])
    assert s5["epochs_identical"]
    assert not s1["epochs_identical"]


def test_error_cells_are_left_out_of_rates_and_comparisons() -> None:
    rng = np.random.default_rng(3)
    df = simulate(rng, 6, 1, ["a", "b"], identical=True)
    df["status"] = np.where(df["passed"], "passed", "failed")
    df.loc[0, ["passed", "status"]] = (False, "error")
    s = summary_table(df).set_index("mode")
    assert s.loc["a", "errors"] == 1
    assert s.loc["a", "n"] == 5
    c = paired_comparisons(df).iloc[0]
    assert c["n_pairs"] == 5
