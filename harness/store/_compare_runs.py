"""Two runs compared cell by cell (the viewer's compare page): the cells side by side with
their flips, per-(provider, mode) deltas, and how the two runs' matrices differ. Reads only the
tables and views of docs/sql.md, like :mod:`harness.store._browse`.
"""

from __future__ import annotations

from typing import Any

from harness.store._browse import _CELL, _rows, latest_cells_sql
from harness.store._queries import Source, _con

__all__ = ["COMPARE_SHOWS", "compare_cells", "compare_groups", "matrix_differences"]


#: What the compare page lists: ``flips`` (passed in one run, failed in the other),
#: ``changed`` (every status change, new and missing cells too: the default) or ``all`` (the
#: unchanged cells as well).
COMPARE_SHOWS = ("flips", "changed", "all")
_FLIP_SQL = """CASE WHEN a.status = 'passed' AND b.status = 'failed' THEN 'regressed'
            WHEN a.status = 'failed' AND b.status = 'passed' THEN 'fixed'
            WHEN a.status IS NULL THEN 'new' WHEN b.status IS NULL THEN 'missing'
            WHEN a.status != b.status THEN 'changed' ELSE '' END"""


def _joined(columns: str, latest: bool) -> str:
    return (
        f"({latest_cells_sql(columns, latest=latest)}) a "
        f"FULL OUTER JOIN ({latest_cells_sql(columns, latest=latest)}) b USING ({_CELL})"
    )


def compare_cells(
    con: Source,
    run_a: str,
    run_b: str,
    limit: int = 500,
    *,
    latest: bool = True,
    show: str = "all",
) -> list[dict[str, Any]]:
    """Cells of two runs side by side (matched on suite, task, mode, provider and epoch):
    each status, cost and the cost delta, flips first (passed in one, not in the other), then
    the largest cost changes; the first ``limit`` rows of what ``show`` asks for
    (:data:`COMPARE_SHOWS`). ``total`` on each row counts every matched cell, ``flip_n`` the
    cells with the same flip (over every cell, whatever ``show`` lists)."""
    columns = f"{_CELL}, cell_key, status, cost_usd"
    keep = {"flips": "flip IN ('regressed', 'fixed')", "changed": "flip != ''"}.get(show, "true")
    return _rows(
        con,
        f"""
SELECT * FROM (
SELECT coalesce(a.suite, b.suite) AS suite, coalesce(a.task_id, b.task_id) AS task_id,
       coalesce(a.mode, b.mode) AS mode, coalesce(a.provider, b.provider) AS provider,
       coalesce(a.epoch, b.epoch) AS epoch, a.cell_key AS key_a, b.cell_key AS key_b,
       a.status AS status_a, b.status AS status_b, a.cost_usd AS cost_a, b.cost_usd AS cost_b,
       b.cost_usd - a.cost_usd AS cost_delta,
       {_FLIP_SQL} AS flip,
       count(*) OVER () AS total, count(*) OVER (PARTITION BY flip) AS flip_n
FROM {_joined(columns, latest)})
WHERE {keep}
ORDER BY flip = '', abs(coalesce(cost_delta, 0)) DESC, suite, task_id, mode, provider, epoch
LIMIT ?""",
        [run_a, run_b, limit],
    )


def compare_groups(
    con: Source, run_a: str, run_b: str, *, latest: bool = True
) -> list[dict[str, Any]]:
    """Per (provider, mode): each run's cells, pass rate (errors left out) and mean cost, the
    deltas (b - a), and the flips (``regressed``: passed in a, failed in b; ``fixed``: the
    reverse) and status changes among the cells both runs have. Largest pass-rate change
    first."""
    columns = f"{_CELL}, status, cost_usd"
    return _rows(
        con,
        f"""
WITH j AS (
    SELECT coalesce(a.provider, b.provider) AS provider, coalesce(a.mode, b.mode) AS mode,
           a.status AS status_a, b.status AS status_b, a.cost_usd AS cost_a,
           b.cost_usd AS cost_b, {_FLIP_SQL} AS flip
    FROM {_joined(columns, latest)})
SELECT provider, mode, count(*) AS cells,
       count(status_a) AS cells_a, count(status_b) AS cells_b,
       count_if(status_a = 'passed') / nullif(count_if(status_a != 'error'), 0) AS rate_a,
       count_if(status_b = 'passed') / nullif(count_if(status_b != 'error'), 0) AS rate_b,
       rate_b - rate_a AS rate_delta,
       avg(cost_a) AS cost_a, avg(cost_b) AS cost_b, avg(cost_b) - avg(cost_a) AS cost_delta,
       count_if(flip = 'regressed') AS regressed, count_if(flip = 'fixed') AS fixed,
       count_if(flip = 'changed') AS changed, count_if(flip = 'new') AS new,
       count_if(flip = 'missing') AS missing
FROM j GROUP BY ALL
ORDER BY abs(coalesce(rate_delta, 0)) DESC, provider, mode""",
        [run_a, run_b],
    )


def matrix_differences(con: Source, run_a: str, run_b: str) -> list[str]:
    """How the two runs' matrices differ (suites, modes, providers and epochs asked for, from
    ``bench_runs``; tasks actually run, from ``results``), one sentence each: a comparison of
    runs of different matrices compares different things."""
    rows = {
        str(r[0]): r[1:]
        for r in _con(con)
        .execute(
            "SELECT run_id, suites, modes, providers, epochs FROM bench_runs "
            "WHERE run_id IN (?, ?)",
            [run_a, run_b],
        )
        .fetchall()
    }
    out: list[str] = []
    if run_a not in rows or run_b not in rows:
        return out
    for i, what in enumerate(("suites", "modes", "providers")):
        a, b = set(rows[run_a][i] or ()), set(rows[run_b][i] or ())
        if a != b:
            only_a, only_b = ", ".join(sorted(a - b)) or "none", ", ".join(sorted(b - a)) or "none"
            out.append(f"{what} differ: only in {run_a}: {only_a}; only in {run_b}: {only_b}")
    ea, eb = rows[run_a][3], rows[run_b][3]
    if ea != eb:
        out.append(f"epochs differ: {ea if ea is not None else '?'} in {run_a}, "
                   f"{eb if eb is not None else '?'} in {run_b}")  # fmt: skip
    row = (
        _con(con)
        .execute(
            """
WITH t AS (SELECT DISTINCT run_id, suite, task_id FROM results WHERE run_id IN ($a, $b))
SELECT count_if(run_id = $a AND (suite, task_id) NOT IN (
           SELECT (suite, task_id) FROM t WHERE run_id = $b)),
       count_if(run_id = $b AND (suite, task_id) NOT IN (
           SELECT (suite, task_id) FROM t WHERE run_id = $a))
FROM t""",
            {"a": run_a, "b": run_b},
        )
        .fetchone()
    )
    if row and (row[0] or row[1]):
        out.append(f"tasks differ: {row[0]:,} only in {run_a}, {row[1]:,} only in {run_b}")
    return out
