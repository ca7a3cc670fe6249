"""A fault found by adversary round 21, part B (issue 34): round 20 cut the CLI's one-line
errors and warnings (``fail``, ``warn``) to ``LINE_LIMIT`` characters, not its other one-line
messages (``echo_line``): a run id of 1 MB edited into the database printed a line of 1,000,039
characters from ``harness baseline save`` (``wrote b.json: run RRR...``) and one of 1,000,004
from ``harness gate`` (``run RRR...``). Fails on 84cec7a."""

from __future__ import annotations

from pathlib import Path

from harness._oneline import LINE_LIMIT
from tests.e2e.edited_store import edited, said

_BIG = "R" * 1_000_000


def test_a_megabyte_run_id_is_named_on_bounded_lines(stored: Path, tmp_path: Path) -> None:
    db = edited(
        stored,
        tmp_path,
        *(f"UPDATE {table} SET run_id = '{_BIG}'" for table in ("bench_runs", "results_compacted")),
    )
    base = tmp_path / "b.json"
    saved = said(["baseline", "save", "--db", str(db), "-o", str(base)], 0)
    gated = said(["gate", "--db", str(db), "--baseline", str(base)], 0)
    for shown in (saved, gated):
        assert "characters more)" in shown
        assert max(len(line) for line in shown.splitlines()) < LINE_LIMIT + 100
