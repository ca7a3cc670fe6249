"""A fault found by adversary round 20, part B (issue 34): a cost edited into the store by hand
(``UPDATE results_compacted SET cost_usd = 'inf'``, or 1.7e308 in every cell, which sums past
the largest float) ended ``harness report`` and ``harness gate`` in an ``OverflowError``
traceback, exit 1 (the dollar formatters took ``log10`` of infinity); ``baseline save`` already
refused such a cost in one line. Round 18 A bounded what a provider may cost, not what a store
edited by hand holds. Fails on 218441d."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.edited_store import edited, said


@pytest.mark.filterwarnings("error::RuntimeWarning")  # numpy's overflow line (the lead)
@pytest.mark.parametrize("cost", ["'inf'::DOUBLE", "1.7e308", "'-inf'::DOUBLE"])
def test_a_cost_past_the_largest_number_is_shown_not_raised(
    stored: Path, tmp_path: Path, cost: str
) -> None:
    db = edited(stored, tmp_path / "db", f"UPDATE results_compacted SET cost_usd = {cost}")
    out = tmp_path / "out"
    shown = said(["report", "--db", str(db), "--out", str(out), "--format", "md,html,json"], 0)
    assert "wrote" in shown
    assert "inf" in (out / "report.md").read_text()
    gate = said(["gate", "--db", str(db), "--baseline", str(stored / "baseline.json")], 1)
    assert "$inf" in gate or "$-inf" in gate or "-$inf" in gate
