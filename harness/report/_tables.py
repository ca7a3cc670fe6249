"""Per mode x provider tables from a ``results`` DataFrame (docs/architecture.md, docs/sql.md).

Every function takes the DataFrame as the store returns it (one row per matrix cell) and checks it
with :func:`prepare_results` first: the cell key and ``passed`` are required, the numeric columns
are optional (missing ones count as unknown), and a cell that appears twice keeps its last row.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pandas as pd

from harness.errors import ReportInputError
from harness.report._stats import pass_at_k, pass_hat_k, wilson_interval_tasks

__all__ = [
    "CELL_KEY",
    "GROUP",
    "NUMERIC_COLUMNS",
    "REQUIRED_COLUMNS",
    "ReportInputError",
    "epochs_identical",
    "finish_reason_table",
    "pass_k_table",
    "prepare_results",
    "scored",
    "summary_table",
    "task_means",
]

CELL_KEY: tuple[str, ...] = ("suite", "task_id", "mode", "provider", "epoch")
"""One matrix cell. A row of ``results`` is one cell of one run."""
GROUP: list[str] = ["mode", "provider"]
REQUIRED_COLUMNS: tuple[str, ...] = (*CELL_KEY, "passed")
NUMERIC_COLUMNS: tuple[str, ...] = (
    "score",
    "iterations",
    "tool_calls",
    "llm_calls",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "duration_ms",
)
_TEXT_COLUMNS = (
    "run_id",
    "model",
    "finish_reason",
    "category",
    "trace_id",
    "grader_explanation",
    "halted_reason",
)


def prepare_results(df: pd.DataFrame, *, source: str = "results") -> tuple[pd.DataFrame, list[str]]:
    """Check and normalise a results DataFrame; return it with a list of warnings.

    Raises :class:`ReportInputError` naming the missing columns. ``passed`` becomes bool (a
    missing value counts as failed, with a warning), numeric columns become float (unparseable
    values and ``None`` become NaN = unknown), key columns become strings and ``epoch`` an int.
    """
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing:
        raise ReportInputError(
            f"{source}: missing column(s) {', '.join(missing)}; "
            f"need at least {', '.join(REQUIRED_COLUMNS)}"
        )
    warnings: list[str] = []
    out = pd.DataFrame(index=pd.RangeIndex(len(df)))
    for col in ("suite", "task_id", "mode", "provider"):
        out[col] = df[col].astype(str).to_numpy()
    epoch = pd.to_numeric(df["epoch"], errors="coerce")
    if epoch.isna().any():
        raise ReportInputError(f"{source}: column epoch has {int(epoch.isna().sum())} non-integers")
    out["epoch"] = epoch.astype("int64").to_numpy()
    passed = df["passed"]
    unknown = int(passed.isna().sum())
    if unknown:
        warnings.append(
            f"{source}: {unknown} cell(s) without a pass/fail verdict counted as failed"
        )
    out["passed"] = passed.fillna(False).astype(bool).to_numpy()
    for col in NUMERIC_COLUMNS:
        if col in df.columns:
            out[col] = pd.to_numeric(df[col], errors="coerce").astype("float64").to_numpy()
        else:
            out[col] = np.nan
    for col in _TEXT_COLUMNS:
        out[col] = df[col].astype(object).to_numpy() if col in df.columns else None
    out["finish_reason"] = out["finish_reason"].fillna("unknown").astype(str)
    out["status"] = _statuses(df, out)
    out["error"] = df["error"].astype(object).to_numpy() if "error" in df.columns else None
    dup = out.duplicated(list(CELL_KEY), keep="last")
    if dup.any():
        warnings.append(
            f"{source}: {int(dup.sum())} duplicate cell row(s) (same suite, task, mode, provider, "
            "epoch); kept the last of each"
        )
        out = out.loc[~dup].reset_index(drop=True)
    return out, warnings


def _statuses(df: pd.DataFrame, out: pd.DataFrame) -> np.ndarray:
    """``status`` as given (passed | failed | error), else derived: passed from ``passed``; an
    old row with an ``error`` and no verdict is an error cell."""
    derived = np.array(np.where(out["passed"].to_numpy(), "passed", "failed"), dtype=object)
    if "error" in df.columns and "status" not in df.columns:
        err = df["error"].notna().to_numpy() & ~out["passed"].to_numpy()
        derived[err] = "error"
    if "status" not in df.columns:
        return derived
    given = np.array(df["status"].astype(object).to_numpy(), dtype=object, copy=True)
    missing = pd.isna(given)
    given[missing] = derived[missing]
    return given


def scored(p: pd.DataFrame) -> pd.DataFrame:
    """The cells that were scored (status passed or failed): error cells are left out of pass
    rates, costs and comparisons."""
    return p.loc[p["status"] != "error"]


def task_means(g: pd.DataFrame, column: str) -> pd.Series:
    """Per-task means over epochs (the task is the statistical unit; epochs are repeated
    measures of it), NaN values skipped."""
    return g.groupby(["suite", "task_id"], sort=True)[column].mean()


def epochs_identical(g: pd.DataFrame) -> bool:
    """True when some task ran more than one epoch and every task's epochs agree on the
    outcome and the cost: the extra epochs then add no information (cassette replay at
    temperature 0 does this)."""
    by_task = g.groupby(["suite", "task_id"], sort=False)
    if by_task["epoch"].nunique().max() <= 1:
        return False
    same_pass = by_task["passed"].nunique().max() <= 1
    same_cost = by_task["cost_usd"].nunique(dropna=False).max() <= 1
    return bool(same_pass and same_cost)


def _finish_mix(reasons: pd.Series) -> str:
    counts = reasons.value_counts()
    ordered = sorted(counts.items(), key=lambda kv: (-int(kv[1]), str(kv[0])))
    return ", ".join(f"{name} {int(n):,}" for name, n in ordered)


def summary_frame(p: pd.DataFrame) -> pd.DataFrame:
    """:func:`summary_table` on an already prepared frame."""
    rows = []
    for (mode, provider), all_cells in p.groupby(GROUP, sort=True):
        g = scored(all_cells)
        errors = len(all_cells) - len(g)
        n = len(g)
        k = int(g["passed"].sum())
        per_task = task_means(g, "passed")
        # The interval is over tasks: epochs are repeated measures, not new trials.
        low, high = wilson_interval_tasks(float(per_task.sum()), len(per_task))
        cost = g["cost_usd"].dropna()
        tokens = g["input_tokens"] + g["output_tokens"]
        rows.append(
            {
                "mode": mode,
                "provider": provider,
                "n": n,
                "passed": k,
                "pass_rate": float(per_task.mean()) if n else math.nan,
                "pass_ci_low": low,
                "pass_ci_high": high,
                "tasks": len(per_task),
                "errors": errors,
                "epochs_identical": epochs_identical(g) if n else False,
                "cost_known": len(cost),
                "cost_unknown": n - len(cost),
                "cost_mean": float(cost.mean()) if len(cost) else math.nan,
                "cost_median": float(cost.median()) if len(cost) else math.nan,
                "cost_total": float(cost.sum()) if len(cost) else math.nan,
                "input_tokens_mean": float(g["input_tokens"].mean()),
                "output_tokens_mean": float(g["output_tokens"].mean()),
                "tokens_total": float(tokens.sum(min_count=1)),
                "iterations_mean": float(g["iterations"].mean()),
                "iterations_median": float(g["iterations"].median()),
                "llm_calls_mean": float(g["llm_calls"].mean()),
                "tool_calls_mean": float(g["tool_calls"].mean()),
                "duration_ms_median": float(g["duration_ms"].median()),
                "finish_reasons": _finish_mix(g["finish_reason"]),
            }
        )
    return pd.DataFrame(rows, columns=_SUMMARY_COLUMNS)


_SUMMARY_COLUMNS = [
    "mode",
    "provider",
    "n",
    "passed",
    "pass_rate",
    "pass_ci_low",
    "pass_ci_high",
    "tasks",
    "errors",
    "epochs_identical",
    "cost_known",
    "cost_unknown",
    "cost_mean",
    "cost_median",
    "cost_total",
    "input_tokens_mean",
    "output_tokens_mean",
    "tokens_total",
    "iterations_mean",
    "iterations_median",
    "llm_calls_mean",
    "tool_calls_mean",
    "duration_ms_median",
    "finish_reasons",
]


def summary_table(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (mode, provider), sorted, with these columns:

    ``n`` scored cells (``errors``: cells with status ``error``, left out of everything else),
    ``passed``, ``pass_rate`` (the mean over ``tasks`` of each task's pass rate over its
    epochs) and its 95% Wilson interval over tasks ``pass_ci_low`` / ``pass_ci_high`` (the task
    is the unit: 10 tasks x 5 identical epochs give the interval of 10 tasks x 1 epoch),
    ``epochs_identical`` (every task's epochs agree: they add no information); ``cost_known``
    / ``cost_unknown`` cells and, over the known costs only, ``cost_mean`` / ``cost_median`` /
    ``cost_total`` (NaN when no cost is known); mean input and
    output tokens and ``tokens_total``; mean and median iterations; mean LLM and tool calls;
    median duration; ``finish_reasons``, the mix as text ("stop 8, error_max_turns 2").
    Means skip unknown (NaN) values.
    """
    return summary_frame(prepare_results(df)[0])


def finish_reason_frame(p: pd.DataFrame) -> pd.DataFrame:
    """:func:`finish_reason_table` on an already prepared frame."""
    if p.empty:
        return pd.DataFrame(columns=GROUP)
    counts = p.groupby([*GROUP, "finish_reason"]).size().unstack("finish_reason", fill_value=0)
    order = counts.sum().sort_index().sort_values(ascending=False, kind="stable").index
    counts = counts[order]
    counts.columns.name = None
    return counts.reset_index()


def finish_reason_table(df: pd.DataFrame) -> pd.DataFrame:
    """Counts of each finish reason per (mode, provider); one column per reason, most common
    first."""
    return finish_reason_frame(prepare_results(df)[0])


def pass_k_frame(p: pd.DataFrame, k: int | None = None) -> pd.DataFrame:
    """:func:`pass_k_table` on an already prepared frame."""
    per_task = (
        p.groupby([*GROUP, "suite", "task_id"], sort=True)["passed"]
        .agg(n="size", c="sum")
        .reset_index()
    )
    columns = [*GROUP, "tasks", "k", "pass_at_1", "pass_at_k", "pass_hat_k", "tasks_short"]
    if per_task.empty:
        return pd.DataFrame(columns=columns)
    k_used = int(per_task["n"].min()) if k is None else int(k)
    if k_used < 1:
        raise ReportInputError(f"pass@k needs k >= 1, got {k_used}")
    rows = []
    for (mode, provider), g in per_task.groupby(GROUP, sort=True):
        ok = g[g["n"] >= k_used]
        ns, cs = ok["n"].astype(int).tolist(), ok["c"].astype(int).tolist()
        rows.append(
            {
                "mode": mode,
                "provider": provider,
                "tasks": len(ok),
                "k": k_used,
                "pass_at_1": _mean(pass_at_k(n, c, 1) for n, c in zip(ns, cs, strict=True)),
                "pass_at_k": _mean(pass_at_k(n, c, k_used) for n, c in zip(ns, cs, strict=True)),
                "pass_hat_k": _mean(pass_hat_k(n, c, k_used) for n, c in zip(ns, cs, strict=True)),
                "tasks_short": len(g) - len(ok),
            }
        )
    return pd.DataFrame(rows, columns=columns)


def _mean(values: Iterable[float]) -> float:
    vals = list(values)
    return float(sum(vals) / len(vals)) if vals else math.nan


def pass_k_table(df: pd.DataFrame, k: int | None = None) -> pd.DataFrame:
    """pass@1, pass@k and pass^k per (mode, provider), averaged over tasks.

    Each task's epochs are its trials (n of them, c passing). ``k`` defaults to the smallest
    number of epochs any task has, so every task counts; with an explicit ``k`` the tasks with
    fewer than ``k`` epochs are left out and counted in ``tasks_short``. pass@1 is the mean of
    c/n; pass@k (at least one of k passes) is optimistic, pass^k (all k pass) pessimistic.
    """
    return pass_k_frame(prepare_results(df)[0], k)
