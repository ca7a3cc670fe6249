"""Task-level views of a run for the report: the task x (mode, provider) grid of epoch
outcomes, and the failing and errored cells with the grader's explanation."""

from __future__ import annotations

import pandas as pd

from harness.report._tables import CELL_KEY, GROUP

__all__ = ["CHIPS", "failing_cells_frame", "task_grid_frame"]

#: One character per epoch in the grid: passed, failed, error (not scored).
CHIPS = {"passed": "✓", "failed": "✗", "error": "!"}


def task_grid_frame(p: pd.DataFrame) -> pd.DataFrame:
    """One row per (suite, task): ``spread`` (the largest difference in pass rate between two
    columns) and one column per "mode / provider" holding its epochs' outcomes in epoch order
    (``✓✗``; ``!`` for an error). Tasks that separate the columns come first."""
    if p.empty:
        return pd.DataFrame(columns=["suite", "task_id", "spread"])
    d = p.sort_values([*CELL_KEY])
    d = d.assign(
        column=d["mode"] + " / " + d["provider"],
        chip=d["status"].map(CHIPS).fillna("?"),
        ok=(d["status"] == "passed").astype(float).where(d["status"] != "error"),
    )
    chips = d.groupby(["suite", "task_id", "column"], sort=False)["chip"].agg("".join)
    grid = chips.unstack("column", fill_value="")
    order = d[[*GROUP, "column"]].drop_duplicates().sort_values(GROUP)["column"].tolist()
    grid = grid.reindex(columns=order, fill_value="")
    rates = d.groupby(["suite", "task_id", "column"])["ok"].mean().unstack("column")
    spread = (rates.max(axis=1) - rates.min(axis=1)).fillna(0.0)
    grid.insert(0, "spread", spread.reindex(grid.index).fillna(0.0))
    grid = grid.reset_index()
    grid.columns.name = None
    return grid.sort_values(
        ["spread", "suite", "task_id"], ascending=[False, True, True]
    ).reset_index(drop=True)


def failing_cells_frame(p: pd.DataFrame) -> pd.DataFrame:
    """The cells that failed or errored: key, status, finish reason and why (the grader's
    explanation, or the error for a cell that could not be scored), errors first."""
    columns = [*CELL_KEY, "status", "finish_reason", "why"]
    bad = p[p["status"] != "passed"]
    if bad.empty:
        return pd.DataFrame(columns=columns)
    why = bad["error"].where(bad["status"] == "error")
    if "grader_explanation" in bad.columns:
        why = why.fillna(bad["grader_explanation"])
    out = bad.assign(why=why.fillna("").astype(str))[columns]
    out = out.assign(_e=out["status"] != "error")
    return out.sort_values(["_e", *CELL_KEY]).drop(columns="_e").reset_index(drop=True)
