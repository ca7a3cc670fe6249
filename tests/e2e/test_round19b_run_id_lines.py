"""Faults found by adversary round 19, part B (issue 34), past round 18's one-line errors and
warnings: a run id edited into the database (``R\\nharness gate: PASSED``) still printed a
line of its own from the lines that are no error: ``baseline save``'s ``wrote b.json: run R``
and ``gate``'s ``run R`` (above the gate's real verdict), and ``compact --repair``'s
``quarantined: run R`` and the warnings naming a damaged shard in a run folder so named
(``harness gate`` printed ``harness gate: PASSED`` above its verdict). And a database moved
or copied with its runs folder, a damaged shard in it, failed every reader (``report``,
``gate``: ``cannot read the views ... No magic bytes found``, exit 2) where the reader of a
file not moved leaves the shard out with a warning. Each fails on f4c036f."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from harness.cli import main
from tests.e2e.edited_store import edited, said, store_two_cells

FORGED = "harness gate: PASSED"
_NAMED = f"'R' || chr(10) || '{FORGED}'"


def _forged(tmp_path: Path) -> Path:
    stored = store_two_cells(tmp_path / "stored")
    done = CliRunner().invoke(main, ["compact", "--db", str(stored / "h.duckdb")])
    assert done.exit_code == 0, done.output
    return edited(
        stored,
        tmp_path / "edited",
        f"UPDATE bench_runs SET run_id = {_NAMED}",
        f"UPDATE results_compacted SET run_id = {_NAMED}",
    )


def test_baseline_save_and_gate_name_the_run_on_one_line(tmp_path: Path) -> None:
    db = _forged(tmp_path)
    saved = said(["baseline", "save", "--db", str(db), "-o", str(tmp_path / "b.json")], 0)
    assert f"run R\\x0a{FORGED}, 2 cells" in saved, saved
    gated = said(["gate", "--db", str(db), "--baseline", str(tmp_path / "b.json")], 0)
    lines = gated.splitlines()
    assert lines[0] == f"run R\\x0a{FORGED}", gated
    assert [line for line in lines if line.startswith("harness gate:")] == [lines[1]]


def _cli(args: list[str], cwd: Path) -> str:
    """Standard output and error of the real CLI (the store's warnings are log records)."""
    done = subprocess.run([sys.executable, "-m", "harness.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return done.stdout + done.stderr


def _damaged_folder(stored: Path) -> Path:
    folder = stored / "runs" / f"R\n{FORGED}"
    folder.mkdir()
    (folder / "results-20261205000000-1-abcdef-000001.parquet").write_bytes(b"\xee" * 100)
    return folder


def test_a_damaged_shard_is_named_on_one_line_and_left_out_of_a_moved_file(
    tmp_path: Path,
) -> None:
    stored = store_two_cells(tmp_path / "stored")
    moved = tmp_path / "moved"
    shutil.copytree(stored, moved)  # the views name the old runs folder: the reader's own
    _damaged_folder(moved)
    gated = _cli(["gate", "--db", str(moved / "h.duckdb"), "--baseline",
                  str(moved / "baseline.json")], tmp_path)  # fmt: skip
    assert f"run R\\x0a{FORGED}: damaged shard" in gated, gated
    assert sum(line.startswith("harness gate:") for line in gated.splitlines()) == 1, gated
    _cli(["report", "--db", str(moved / "h.duckdb"), "--out", str(tmp_path / "r")], tmp_path)


def test_compact_names_a_quarantined_shard_on_one_line(tmp_path: Path) -> None:
    stored = store_two_cells(tmp_path)
    _damaged_folder(stored)
    output = _cli(["compact", "--db", str(stored / "h.duckdb"), "--repair"], tmp_path)
    assert f"R\\x0a{FORGED}" in output, output
    assert not any(line.startswith(FORGED) for line in output.splitlines()), output
