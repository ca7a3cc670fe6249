"""Faults found by adversary round 21, part B (issue 34): JSON read back from a database edited
by hand, nested past Python's parser. A run's ``config`` nested 100,000 deep ended ``harness
gate`` in a ``RecursionError`` traceback, exit 1 (round 20 edited the results' JSON columns,
not the run's); a transcript nested so deep made ``decode_transcript`` raise (its contract:
None when unreadable), so the viewer's cell page was the 500 page, the cell's other fields
unshown. Both fail on 84cec7a."""

from __future__ import annotations

import zlib
from pathlib import Path

from harness.store import decode_transcript
from tests.e2e.edited_store import edited, said

_DEEP = "[" * 100_000 + "]" * 100_000


def test_the_gate_reads_past_a_run_config_nested_too_deeply(stored: Path, tmp_path: Path) -> None:
    db = edited(stored, tmp_path, f"UPDATE bench_runs SET config = '{_DEEP}'")
    shown = said(["gate", "--db", str(db), "--baseline", str(tmp_path / "baseline.json")], 0)
    assert "harness gate: PASSED" in shown


def test_a_transcript_nested_too_deeply_is_unreadable_not_raised() -> None:
    assert decode_transcript(zlib.compress(_DEEP.encode())) is None
