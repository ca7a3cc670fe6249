"""The report states what could change outcomes between modes, which cells could not be scored,
when epochs added nothing, and how costs were priced."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from harness.report import build_report, render_markdown

Rows = Callable[..., pd.DataFrame]


def test_method_notes_errors_and_identical_epochs(rows: Rows) -> None:
    specs = []
    for mode in ("react", "plan_and_solve"):
        for t in range(4):
            for e in range(2):
                specs.append({"mode": mode, "task_id": f"t{t}", "epoch": e, "passed": t % 2 == 0})
    df = rows(*specs)
    df["status"] = df["passed"].map({True: "passed", False: "failed"})
    df["error"] = None
    df.loc[0, ["passed", "status", "error"]] = (False, "error", "CassetteMiss: no recorded answer")
    md = render_markdown(build_report(df))
    assert "## Method notes" in md
    assert "strict no-progress check" in md
    assert "progress_check" in md
    assert "planning call counts as one of its max_iterations" in md
    assert "plan_and_solve on live: every task's epochs were identical" in md
    assert "## Cells that could not be scored" in md
    assert "CassetteMiss: no recorded answer" in md
    assert "1 errored" in md
