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
import re
from pathlib import Path

import duckdb
import pandas as pd
import yaml

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
            " cost_usd, calls, finish_reason, cassette from results where run_id = ?"
            f" and provider in ({', '.join('?' for _ in providers)})",
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


def tool_results(cassette: str) -> list[str]:
    """The real tool results a cell's model was shown (the few-shot examples' left out)."""
    recorded = yaml.safe_load(Path(cassette).read_text(encoding="utf-8"))
    seen: list[str] = []
    for interaction in recorded["interactions"]:
        for message in json.loads(interaction["request"]["body"]).get("messages", []):
            content = message.get("content")
            if isinstance(content, list):
                content = " ".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
            text = str(content or "")
            head, _, body = text.partition("\n")
            is_result = message.get("role") == "user" and head.startswith("Result of tool call")
            if is_result and "(example_" not in head:
                seen.append(body)
    return seen


def why(cells: pd.DataFrame, suite_file: str = "suites/arithmetic.yaml") -> pd.DataFrame:
    """How each arithmetic cell ended, counted per provider and mode."""
    tasks = yaml.safe_load(Path(suite_file).read_text(encoding="utf-8"))["tasks"]
    patterns = {t["id"]: t["expect"]["value"] for t in tasks if t["expect"]["kind"] == "regex"}

    def outcome(cell: pd.Series) -> str:
        if cell.passed:
            return "passed"
        if not cell.tool_calls:
            return "no tool call"
        pattern = patterns[cell.task_id]
        if not any(re.search(pattern, r) for r in tool_results(cell.cassette)):
            return "never got the right result"
        if cell.finish_reason == "stop":
            return "got the right result, answered wrongly"
        return "got the right result, ended by a loop guard"

    arithmetic = cells[(cells.suite == "arithmetic") & cells.task_id.isin(list(patterns))]
    labels = arithmetic.apply(outcome, axis=1).rename("outcome")
    table = pd.crosstab(labels, [arithmetic.provider, arithmetic["mode"]])
    return table.astype(int)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default="reports/harness.duckdb")
    parser.add_argument("--run", default=None)
    parser.add_argument("--providers", default="llamacpp-gemma,llamaserver-gemma")
    parser.add_argument("--why", action="store_true", help="how each arithmetic cell ended")
    args = parser.parse_args()
    providers = [p for p in args.providers.split(",") if p]
    cells = load(args.db, args.run, providers)
    table = pd.DataFrame(
        {p: figures(cells[cells.provider == p]) for p in providers if (cells.provider == p).any()}
    )
    print_markdown(table)
    if args.why:
        print()
        print_markdown(why(cells))
    return 0


def print_markdown(table: pd.DataFrame) -> None:
    def header(column: object) -> str:
        return " ".join(map(str, column)) if isinstance(column, tuple) else str(column)

    print("| | " + " | ".join(header(c) for c in table.columns) + " |")
    print("|---" * (len(table.columns) + 1) + "|")
    for name, row in table.iterrows():
        print(f"| {name} | " + " | ".join(str(v) for v in row) + " |")


if __name__ == "__main__":
    raise SystemExit(main())
