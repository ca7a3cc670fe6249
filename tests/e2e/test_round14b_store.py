"""Faults found by adversary round 14, part B (issue 34): run ids of a database edited by hand
that name a folder outside the runs folder (the compaction deleted files there), a database cut
short, a runs folder that is a file, output names too long for the system, and a SQLite file as
``--db``. Each test fails on a3f9594, through the real CLI (click's runner) over real files."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.e2e.edited_store import SUITE, edited, store_two_cells
from tests.e2e.edited_store import said as _said


def _run(db: Path, *more: str) -> list[str]:
    return ["run", str(SUITE), "--providers", "mock", "--modes", "react", "--db", str(db),
            "--no-progress", "--tasks", "add-small", *more]  # fmt: skip


def _precious(folder: Path) -> list[str]:
    """A folder of someone's files with the names a run folder holds."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("finish.json", "cells.jsonl", ".draft.tmp", "notes.txt"):
        (folder / name).write_text("mine", encoding="utf-8")
    return sorted(os.listdir(folder))


@pytest.mark.parametrize("where", ["absolute", "up", "runs itself"])
def test_a_run_id_naming_a_folder_elsewhere_deletes_nothing_there(
    stored: Path, tmp_path: Path, where: str
) -> None:
    """Before: `harness compact` (and every `harness run` at its end) took ``runs / run_id`` of
    each ended run as its folder: an id ``/tmp/x``, ``../..`` or ``.`` named a folder elsewhere,
    whose ``finish.json``, ``cells.jsonl`` and ``.*.tmp`` files it deleted, then the folder
    itself when that left it empty."""
    victim = {
        "absolute": tmp_path / "elsewhere",
        "up": tmp_path / "elsewhere",
        "runs itself": tmp_path / "db" / "runs",
    }[where]
    run_id = {"absolute": str(victim), "up": "../../elsewhere", "runs itself": "."}[where]
    db = edited(stored, tmp_path / "db", "INSERT INTO bench_runs (run_id, started_at, status) "
                f"VALUES ('{run_id}', now(), 'finished')")  # fmt: skip
    before = _precious(victim)
    said = _said(["compact", "--db", str(db)], 0)
    assert "not a plain folder name" in said, said
    _said(_run(db), 0)
    assert sorted(os.listdir(victim)) == before


def test_a_run_id_naming_the_schema_folder_leaves_it_alone(stored: Path, tmp_path: Path) -> None:
    """Round 14, the lead: past part B's fix a run id ``_schema`` was compacted: its two empty
    shards were ingested and deleted, and the folder with them (every view's glob needs them)."""
    db = edited(stored, tmp_path, "UPDATE bench_runs SET run_id = '_schema' WHERE run_id = "
                "(SELECT min(run_id) FROM bench_runs)")  # fmt: skip
    said = _said(["compact", "--db", str(db)], 0)
    assert "a folder the harness keeps for itself" in said, said
    assert sorted(os.listdir(tmp_path / "runs" / "_schema")) == [
        "results-schema.parquet", "spans-schema.parquet"]  # fmt: skip


def test_a_run_id_too_long_for_a_folder_is_no_traceback(stored: Path, tmp_path: Path) -> None:
    """Before: ``(runs / run_id).is_dir()`` raised ENAMETOOLONG: a traceback, exit 1."""
    db = edited(stored, tmp_path, "INSERT INTO bench_runs (run_id, started_at, status) "
                f"VALUES ('{'r' * 5000}', now(), 'finished')")  # fmt: skip
    said = _said(["compact", "--db", str(db)], 0)
    assert "5,000 bytes long" in said, said


def test_resuming_a_run_whose_id_names_a_folder_elsewhere_is_refused(
    stored: Path, tmp_path: Path
) -> None:
    """Before: `run --resume` reopened the run and wrote its shards under ``/tmp/...``."""
    victim = tmp_path / "elsewhere"
    db = edited(stored, tmp_path / "db",
                "UPDATE bench_runs SET label = 'L', status = 'interrupted'",
                "INSERT INTO bench_runs (run_id, started_at, status, label, suites, modes, "
                f"providers, epochs) SELECT '{victim}', started_at + INTERVAL 1 MINUTE, "
                "'interrupted', 'L', suites, modes, providers, epochs FROM bench_runs")  # fmt: skip
    args = _run(db, "--label", "L", "--resume")
    args[args.index("add-small")] = "add-small,times-table"
    said = _said(args, 2)
    assert "has no folder under" in said, said
    assert said.count("\n") == 1, said
    assert not victim.exists()


def test_a_database_cut_short_is_one_line(stored: Path, tmp_path: Path) -> None:
    """Before: DuckDB's ``IOException: Could not read enough bytes`` came from the first
    query, outside every handler: a traceback, exit 1, from each command."""
    db = tmp_path / "h.duckdb"
    whole = (stored / "h.duckdb").read_bytes()
    db.write_bytes(whole[: len(whole) // 7])
    for args in (
        ["report", "--db", str(db), "--out", str(tmp_path / "rep")],
        ["gate", "--db", str(db), "--baseline", str(stored / "baseline.json")],
        ["baseline", "save", "--db", str(db), "-o", str(tmp_path / "b.json")],
        ["compact", "--db", str(db)],
        _run(db),
    ):
        said = _said(args, 2)
        assert "could not be read or written" in said, said
        assert said.count("\n") == 1, said


@pytest.mark.parametrize("runs", ["a file", "gone"])
def test_a_runs_folder_gone_or_a_file_is_one_line(tmp_path: Path, runs: str) -> None:
    """Before: the views' glob over ``runs/`` failed in DuckDB: a traceback, exit 1 (a user
    who deleted ``reports/runs/`` by hand got it from every reader). Since the lead's part of
    round 14 a reader that finds no empty schema shards has a writer make them (as for a view
    dropped by hand): a folder gone is made again and read; a file in its place is one line."""
    store_two_cells(tmp_path)
    shutil.rmtree(tmp_path / "runs")
    report = ["report", "--db", str(tmp_path / "h.duckdb"), "--out", str(tmp_path / "r")]
    if runs == "a file":
        (tmp_path / "runs").write_text("not a folder", encoding="utf-8")
        said = _said(report, 2)
        assert f"cannot create {tmp_path / 'runs'}: [Errno 20] Not a directory" in said, said
        assert said.count("\n") == 1, said
    else:
        assert "(2 results)" in _said(report, 0)
        assert (tmp_path / "runs" / "_schema" / "results-schema.parquet").is_file()


@pytest.mark.parametrize("flag", ["--db", "--trace-file"])
def test_an_output_name_too_long_for_the_system_is_one_line(tmp_path: Path, flag: str) -> None:
    """Before: ``Path.is_dir()`` raised ENAMETOOLONG in the output check: a traceback."""
    args = _run(tmp_path / "h.duckdb")
    long = str(tmp_path / ("x" * 300))
    if flag == "--db":
        args[args.index("--db") + 1] = long
    else:
        args += ["--trace-file", long]
    said = _said(args, 2)
    assert f"{flag} {long}: cannot write there (File name too long)" in said, said


def test_a_sqlite_file_as_db_is_refused_without_fetching_an_extension(tmp_path: Path) -> None:
    """DuckDB reads a SQLite file's header and autoinstalls its ``sqlite_scanner`` extension
    from the network: ``Failed to download extension ... (ERROR Could not establish
    connection)`` over three lines, exit 2. A database path must never reach the network."""
    import sqlite3

    db = tmp_path / "h.duckdb"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE t(x)")
    con.commit()
    con.close()
    said = _said(["report", "--db", str(db), "--out", str(tmp_path / "r")], 2)
    assert "download" not in said.lower(), said
    assert said.count("\n") == 1, said
