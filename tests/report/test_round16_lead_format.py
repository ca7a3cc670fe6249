"""Numbers too small to write out in decimals (adversary round 16, part B, found, not fixed):
a baseline cost of 5e-324 printed as ``$0.000...00049`` with 325 digits in ``harness gate``."""

from __future__ import annotations

from harness.report._gate_result import _sig, _usd, distinct_pair, fmt_change_pct


def test_tiny_costs_and_changes_are_written_in_scientific_notation() -> None:
    assert _usd(5e-324, 2) == "$4.9e-324"  # the float nearest 5e-324 is 4.94e-324
    assert _usd(-1e-12, 3) == "-$1.00e-12"
    assert _sig(1e-300) == "1.0e-300"
    assert fmt_change_pct(1e-20) == "+1.0e-18%"
    assert distinct_pair(5e-324, 1e-323, _usd, 2) == ["$4.9e-324", "$9.9e-324"]


def test_ordinary_amounts_keep_their_decimals() -> None:
    assert _usd(0.00013, 2) == "$0.00013"
    assert _usd(1234.5, 2) == "$1,234.50"
    assert _usd(1e-9, 2) == "$0.0000000010"  # ten decimals: still written out
    assert _sig(0.00013) == "0.00013"
    assert fmt_change_pct(0.001) == "+0.10%"
