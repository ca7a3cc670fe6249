"""Cell-by-cell difference between a run and a baseline (another run, or a baseline file)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from harness.report._tables import CELL_KEY, prepare_results

__all__ = ["DIFF_COLUMNS", "STATUSES", "baseline_diff", "diff_counts", "diff_frame"]

STATUSES = (
    "newly_failing",
    "newly_passing",
    "still_failing",
    "still_passing",
    "new",
    "missing",
)
"""``new``: the cell is only in the run; ``missing``: only in the baseline."""
DIFF_COLUMNS = [
    *CELL_KEY,
    "status",
    "passed_base",
    "passed_now",
    "model_base",
    "model_now",
    "model_changed",
    "finish_reason_base",
    "finish_reason_now",
    "cost_base",
    "cost_now",
    "cost_delta",
    "cost_change",
]
_COST_RTOL = 1e-9


def diff_frame(current: pd.DataFrame, baseline: pd.DataFrame) -> pd.DataFrame:
    """:func:`baseline_diff` on two already prepared frames."""
    keep = [*CELL_KEY, "passed", "model", "finish_reason", "cost_usd"]
    merged = pd.merge(
        baseline[keep],
        current[keep],
        on=list(CELL_KEY),
        how="outer",
        suffixes=("_base", "_now"),
        indicator=True,
    )
    side = merged["_merge"].astype(str)
    pb = merged["passed_base"].astype("boolean")
    pn = merged["passed_now"].astype("boolean")
    conditions = [side == "left_only", side == "right_only", pb & ~pn, ~pb & pn, pb & pn]
    status = np.select(
        [c.fillna(False).to_numpy(dtype=bool) for c in conditions],
        ["missing", "new", "newly_failing", "newly_passing", "still_passing"],
        default="still_failing",
    )
    cb = merged["cost_usd_base"].astype("float64")
    cn = merged["cost_usd_now"].astype("float64")
    delta = cn - cb
    tol = _COST_RTOL * np.maximum(cb.abs(), cn.abs())
    change = np.select(
        [delta.isna().to_numpy(), (delta > tol).to_numpy(), (delta < -tol).to_numpy()],
        ["unknown", "up", "down"],
        default="same",
    )
    mb, mn = merged["model_base"], merged["model_now"]
    out = pd.DataFrame(
        {
            **{c: merged[c] for c in CELL_KEY},
            "status": status,
            "passed_base": pb,
            "passed_now": pn,
            "model_base": mb,
            "model_now": mn,
            "model_changed": (mb.notna() & mn.notna() & (mb != mn)).astype(bool),
            "finish_reason_base": merged["finish_reason_base"],
            "finish_reason_now": merged["finish_reason_now"],
            "cost_base": cb,
            "cost_now": cn,
            "cost_delta": delta,
            "cost_change": np.where(side == "both", change, "unknown"),
        }
    )
    rank = {s: i for i, s in enumerate(STATUSES)}
    out["_rank"] = out["status"].map(rank)
    out["_delta"] = -out["cost_delta"].fillna(-math.inf)
    out = out.sort_values(["_rank", "_delta", *CELL_KEY], kind="stable")
    return out.drop(columns=["_rank", "_delta"]).reset_index(drop=True)[DIFF_COLUMNS]


def baseline_diff(current: pd.DataFrame, baseline: pd.DataFrame) -> pd.DataFrame:
    """One row per cell of either side, keyed by (suite, task_id, mode, provider, epoch).

    ``status`` is one of :data:`STATUSES`; ``cost_change`` is up / down / same, or unknown when a
    side has no cost (or the cell is on one side only); ``model_changed`` flags a cell whose
    model differs from the baseline's. Rows are sorted newly failing first, then newly passing,
    then the rest; within a status, the biggest cost increase first.
    """
    now, _ = prepare_results(current, source="run")
    base, _ = prepare_results(baseline, source="baseline")
    return diff_frame(now, base)


def diff_counts(diff: pd.DataFrame) -> dict[str, int]:
    """How many cells have each status, plus ``cost_up`` / ``cost_down`` / ``model_changed``."""
    counts = {s: int((diff["status"] == s).sum()) for s in STATUSES}
    counts["cost_up"] = int((diff["cost_change"] == "up").sum())
    counts["cost_down"] = int((diff["cost_change"] == "down").sum())
    counts["model_changed"] = int(diff["model_changed"].sum())
    return counts
