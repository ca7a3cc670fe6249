"""What the recorded real-model cassettes measure: the figures docs/recording.md quotes.

Reads the latest run (or ``--run ID``) of a results database written by ``harness run`` /
``nox -s bench`` and prints, per real provider: the pass rate over all suites and over
arithmetic (all modes and per mode), the share of tool-suite cells that made a tool call, the
share of Reflexion cells whose critique ran, the share of (task, mode) whose epochs differ in
text or outcome, and the cost.

    python scripts/recording_figures.py [--db reports/harness.duckdb] [--run ID]
        [--providers llamacpp-gemma,llamaserver-gemma]
"""

from __future__ import annotations

import argparse
import json

import duckdb
import pandas as pd

TOOL_SUITES = ("arithmetic", "files", "lookup")
MODES = ("react", "plan_and_solve", "reflexion")


def load(db: str, run: str | None, providers: list[str]) -> pd.DataFrame:
    con = duckdb.connect(db, read_only=True)
    try:
        if run is None:
            latest = "select run_id from results order by finished_at desc limit 1"
            row = con.execute(latest).fetchone()
            if row is None:
                raise SystemExit(f"{db}: no results")
            run = str(row[0])
        frame = con.execute(
            "select suite, task_id, mode, provider, epoch, passed, status, tool_calls, text,"
            " cost_usd, calls from results where run_id = ? and provider in"
            f" ({', '.join('?' for _ in providers)})",
            [run, *providers],
        ).df()
    finally:
        con.close()
    if frame.empty:
        raise SystemExit(f"{db}: run {run} has no cells for {providers}")
    print(f"run {run}: {len(frame)} cells")
    return frame


def critique_ran(calls: str | None) -> bool:
    return any(c.get("purpose") == "reflect" for c in json.loads(calls or "[]"))


def figures(cells: pd.DataFrame) -> dict[str, str]:
    def pct(values: pd.Series) -> str:
        return f"{100 * values.astype(bool).mean():.1f}%" if len(values) else "n/a"

    arithmetic = cells[cells.suite == "arithmetic"]
    per_mode = " / ".join(pct(arithmetic[arithmetic["mode"] == m].passed) for m in MODES)
    tools = cells[cells.suite.isin(TOOL_SUITES)]
    reflexion = cells[cells["mode"] == "reflexion"]
    epochs = cells.groupby(["task_id", "mode"]).agg(
        texts=("text", lambda s: s.fillna("").nunique()), outcomes=("passed", "nunique")
    )
    differ = ((epochs.texts > 1) | (epochs.outcomes > 1)).mean()
    return {
        "pass rate, all suites": pct(cells.passed),
        "arithmetic, all modes": pct(arithmetic.passed),
        "arithmetic: ReAct / Plan-and-Solve / Reflexion": per_mode,
        "tool-suite cells with a tool call": pct(tools.tool_calls > 0),
        "Reflexion cells where a critique ran": pct(reflexion.calls.map(critique_ran)),
        "(task, mode) whose epochs differ": f"{100 * differ:.0f}%",
        "errored cells": str(int((cells.status == "error").sum())),
        "cost (priced as)": f"${cells.cost_usd.fillna(0).sum():.3f}",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default="reports/harness.duckdb")
    parser.add_argument("--run", default=None)
    parser.add_argument("--providers", default="llamacpp-gemma,llamaserver-gemma")
    args = parser.parse_args()
    providers = [p for p in args.providers.split(",") if p]
    cells = load(args.db, args.run, providers)
    table = pd.DataFrame(
        {p: figures(cells[cells.provider == p]) for p in providers if (cells.provider == p).any()}
    )
    print("| | " + " | ".join(table.columns) + " |")
    print("|---" * (len(table.columns) + 1) + "|")
    for name, row in table.iterrows():
        print(f"| {name} | " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
