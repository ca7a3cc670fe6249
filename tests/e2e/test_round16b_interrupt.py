"""A fault found by adversary round 16, part B (issue 34), fixed by the lead in
harness/cli/__init__.py: Ctrl-C while DuckDB runs a query makes the DuckDB client raise a plain
``RuntimeError('Query interrupted')``, not ``KeyboardInterrupt``; `harness compact` interrupted
mid-batch (3 of 7 SIGINTs 0.7-1.3 s into compacting 57 shards) ended in that traceback, exit 1,
not "interrupted", exit 130. Nothing was lost (the batch rolled back)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

#: `harness compact` whose compaction is one long DuckDB query, Ctrl-C'd 0.5 s into it.
_COMPACT = """
import os, signal, sys, threading
import harness.store._compact as c
def slow(con, *args, **kwargs):
    threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT)).start()
    con.execute("SELECT count(*) FROM range(100000000000) t(x) WHERE x % 7 = 3").fetchall()
c._compact_all = slow
from harness.cli import main
sys.argv[0] = "harness"
main()
"""


def test_ctrl_c_during_a_duckdb_query_is_an_interruption(stored: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _COMPACT, "compact", "--db", str(stored / "h.duckdb")],
        capture_output=True, text=True, timeout=120, env=dict(os.environ),
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr[-300:]
    assert done.returncode == 130
    assert done.stderr.strip().endswith("interrupted")
