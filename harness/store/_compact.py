"""Compaction: the shards of runs that ended, moved into the tables ``results_compacted`` and
``spans_compacted`` of the database file (``harness compact``; also at the end of every run).

Per run, a batch of shards per transaction (memory stays bounded): the rows of the shards not in
the tables yet are inserted (exact duplicates dropped: one row per ``result_id``, one span per
trace and span id), and the shard files are listed in ``compacted_shards``, which the views use
to skip them. Only then are the files deleted, so a process killed at any point loses nothing
and duplicates nothing: before a batch's commit its rows are read from the shards, after it
from the tables. Runs still ``running`` are left alone (their shards are still being written).
A shard that cannot be read is moved to the run's quarantine (see :mod:`harness.store._damage`)
and the run compacted without it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pyarrow.parquet as pq

from harness.store._damage import CELLS_INDEX, scan
from harness.store._diskfull import is_disk_full
from harness.store._schema import JSON_COLUMNS, SPAN_JSON_COLUMNS
from harness.store._shards import shard_files, unfit_run_id

__all__ = ["CompactStats", "compact"]

log = logging.getLogger("harness.store")


@dataclass(slots=True)
class CompactStats:
    runs: int = 0
    results: int = 0
    spans: int = 0
    files: int = 0
    #: Runs left as shards, with why.
    skipped: list[str] = field(default_factory=list)
    #: Damaged shards moved to quarantine while compacting.
    quarantined: list[str] = field(default_factory=list)
    #: The runs counted in ``runs`` (a compaction tried again, after a full disk, adds up).
    seen: set[str] = field(default_factory=set)

    def skip(self, run: str, why: str) -> None:
        """Note ``run`` left as shards because of ``why``, once (a compaction tried again after
        a full disk meets it again)."""
        if f"{run}: {why}" not in self.skipped:
            self.skipped.append(f"{run}: {why}")


def _list(files: Sequence[Path]) -> str:
    return "[" + ", ".join("'" + str(f).replace("'", "''") + "'" for f in files) + "]"


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    rows = con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = 'main' "
        "AND lower(table_name) = ? ORDER BY ordinal_position",
        [table],
    ).fetchall()
    return [str(r[0]) for r in rows]


def _insert(
    con: duckdb.DuckDBPyConnection,
    kind: str,
    files: Sequence[Path],
    run_id: str,
) -> int:
    """Insert the new rows of ``files`` into ``<kind>_compacted``; return how many."""
    table = f"{kind}_compacted"
    source = f"read_parquet({_list(files)}, union_by_name = true)"
    have = _columns(con, table)
    found = [str(r[0]) for r in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()]
    extra = sorted(set(found) - set(have))
    if extra:
        raise _Skip(
            f"its {kind} shards have columns this harness does not know ({', '.join(extra)}): "
            "written by a newer harness; upgrade harness to compact this run (its rows are "
            "read meanwhile)"
        )
    json_columns = JSON_COLUMNS if kind == "results" else frozenset(SPAN_JSON_COLUMNS)
    select = ", ".join(f"{c}::JSON AS {c}" if c in json_columns else c for c in found)
    if kind == "results":
        key, latest = ["result_id"], " ORDER BY finished_at DESC"
    else:
        key, latest = ["trace_id", "span_id"], ""
    keys = ", ".join(key)
    # Rows already in the table are skipped, looked up by the batch's own keys: the batch is
    # the small side of both joins, so the memory stays that of one batch however many rows
    # the run already compacted (an anti join over the run's compacted rows built a hash
    # table of them all, and grew with the run).
    before = con.execute(f"SELECT count(*) FROM {table}").fetchone()
    con.execute(
        f"INSERT INTO {table} BY NAME "
        f"WITH batch AS MATERIALIZED (SELECT {select} FROM {source} s WHERE s.run_id = $run "
        f"QUALIFY row_number() OVER (PARTITION BY {keys}{latest}) = 1), "
        f"have AS (SELECT {keys} FROM {table} o WHERE o.run_id = $run "
        f"AND o.{key[0]} IN (SELECT {key[0]} FROM batch)) "
        f"SELECT b.* FROM batch b ANTI JOIN have h USING ({keys})",
        {"run": run_id},
    )
    after = con.execute(f"SELECT count(*) FROM {table}").fetchone()
    return int(after[0] if after else 0) - int(before[0] if before else 0)


class _Skip(Exception):
    pass


def _rows(file: Path) -> int:
    return int(pq.read_metadata(file).num_rows)


COMPACT_SETTINGS = ("memory_limit = '64MB'", "threads = 1", "preserve_insertion_order = false")
#: Shard files per kind compacted in one transaction: bounds the memory a compaction needs
#: whatever the size of the run (a batch committed is final; the views skip its files).
BATCH_FILES = 32


def _compact_run(
    con: duckdb.DuckDBPyConnection, runs: Path, run_id: str, stats: CompactStats
) -> list[Path]:
    """Compact one run, a batch of shards per transaction; return the shard files that can
    now be deleted."""
    folder = runs / run_id
    done = {
        str(r[0])
        for r in con.execute(
            "SELECT file FROM compacted_shards WHERE run_id = ?", [run_id]
        ).fetchall()
    }
    files = {k: shard_files(folder, k) for k in ("results", "spans")}
    todo = {k: [f for f in v if str(f) not in done] for k, v in files.items()}
    gone = [f for v in files.values() for f in v if str(f) in done]
    batches = max(len(v) for v in todo.values())
    if batches and run_id not in stats.seen:
        stats.seen.add(run_id)
        stats.runs += 1
    for start in range(0, batches, BATCH_FILES):
        batch = {k: v[start : start + BATCH_FILES] for k, v in todo.items()}
        now = datetime.now(UTC).replace(tzinfo=None)
        con.execute("BEGIN TRANSACTION")
        try:
            added = {k: _insert(con, k, v, run_id) if v else 0 for k, v in batch.items()}
            con.executemany(
                "INSERT INTO compacted_shards VALUES (?, ?, ?, ?, ?)",
                [[str(f), run_id, k, _rows(f), now] for k, v in batch.items() for f in v],
            )
            con.execute("COMMIT")
        except _Skip as why:
            con.execute("ROLLBACK")
            stats.skip(run_id, str(why))
            return gone
        except BaseException:
            with contextlib.suppress(duckdb.Error):  # a failed commit (a full disk) rolled back
                con.execute("ROLLBACK")
            raise
        stats.results += added["results"]
        stats.spans += added["spans"]
        gone.extend(f for v in batch.values() for f in v)
    return gone


def compact(
    con: duckdb.DuckDBPyConnection,
    runs: Path,
    run_ids: Sequence[str] | None = None,
    stats: CompactStats | None = None,
) -> CompactStats:
    """Compact the shards of every run (of ``run_ids``) that is not running. ``runs`` is the
    runs folder as the views name it (absolute); ``stats``: those of an earlier try, added to
    (batches it committed count once)."""
    stats = CompactStats() if stats is None else stats
    # A bounded footprint (the run's process holds the rest of its memory): DuckDB spills to
    # disk rather than grow. Measured in benchmarks/bench_throughput.py.
    for setting in COMPACT_SETTINGS:
        con.execute(f"SET {setting}")
    try:
        _compact_all(con, runs, run_ids, stats)
    except duckdb.OutOfMemoryException:  # rows too large for the bound: finish without it
        con.execute("RESET memory_limit")
        _compact_all(con, runs, run_ids, stats)
    finally:
        for setting in COMPACT_SETTINGS:
            con.execute(f"RESET {setting.split('=')[0].strip()}")
    if stats.skipped:
        log.warning("harness: runs left as shards: %s", "; ".join(stats.skipped))
    return stats


def _compact_all(
    con: duckdb.DuckDBPyConnection, runs: Path, run_ids: Sequence[str] | None, stats: CompactStats
) -> None:
    rows = con.execute(
        "SELECT run_id FROM bench_runs WHERE status <> 'running' ORDER BY started_at"
    ).fetchall()
    wanted = None if run_ids is None else set(run_ids)
    for (run_id,) in rows:
        if wanted is not None and run_id not in wanted:
            continue
        why = unfit_run_id(str(run_id))
        if why is not None:  # a database edited by hand: "/tmp/x" or ".." is a folder elsewhere
            shown = repr(run_id if len(run_id) <= 80 else f"{run_id[:80]}...")
            stats.skip(shown, why)
            continue
        folder = runs / run_id
        if folder.is_symlink():  # a link named like a run: its target's files were deleted
            why = "its folder is a symbolic link (refused, as the writer refuses it)"
            stats.skip(repr(run_id), why)
            continue
        if not folder.is_dir():
            continue
        try:
            gone = _compact_run(con, runs, str(run_id), stats)
        except duckdb.Error as exc:  # a shard damaged inside: quarantine it, compact the rest
            if is_disk_full(exc):  # not the shards: the database cannot grow
                raise
            damaged = scan(runs, full=True, files=shard_files(runs / run_id, "results")
                           + shard_files(runs / run_id, "spans"))  # fmt: skip
            if not damaged:
                raise
            stats.quarantined.extend(d.describe() for d in damaged)
            log.warning("harness: compaction of %s failed (%s); retried without them", run_id, exc)
            gone = _compact_run(con, runs, str(run_id), stats)
        for f in gone:
            with contextlib.suppress(FileNotFoundError):
                f.unlink()
        stats.files += len(gone)
        if gone:
            con.execute(
                "DELETE FROM compacted_shards WHERE list_contains(?, file)",
                [[str(f) for f in gone]],
            )
        folder = runs / str(run_id)
        index = [] if shard_files(folder, "results") else [folder / CELLS_INDEX]
        for leftover in [
            *folder.glob(".*.tmp"),
            folder / "finish.json",
            *index,  # which cells each shard held: needed only while shards are left
        ]:  # half-written by a killed process
            with contextlib.suppress(OSError):
                leftover.unlink()
        with contextlib.suppress(OSError):
            folder.rmdir()  # only when empty
