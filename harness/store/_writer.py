"""The results store: one DuckDB catalog file (default ``reports/harness.duckdb``) plus the
Parquet shards that runs write beside it (``reports/runs/<run_id>/``).

    with Store.open("reports/harness.duckdb") as store:
        run_id = store.begin_run(label="nightly", suites=["arithmetic"], modes=["react"], ...)
        store.follow_spans(run_id, "reports/traces/RUN.jsonl")   # spans streamed into shards
        store.write_result(result_row(result, run_id=run_id, suite=..., passed=...))  # per cell
        store.ingest_spans(run_id, "reports/traces/RUN.jsonl")  # the rest of the followed file
        store.finish_run(run_id)
        store.compact()                                          # shards -> tables

Readers are never locked out: a writer opens the DuckDB file only for a moment (to open or close
a run, look up cells for ``--resume``, compact) and writes results as shards in between, which
the ``results`` and ``spans`` views read live. ``write_result`` queues the row; it is on disk
within ``flush_after_s`` + 0.1 s (0.5 s by default), so a run killed mid-matrix keeps every cell
that finished more than that before. Several writers (processes) may share a file; a run left
``running`` by a dead process (same host) is marked ``interrupted`` by the next writer to open it.
A run label has one writer at a time: ``begin_run(label=...)`` holds the label's lock until the
run is finished, and another process is refused with :class:`~harness.errors.LabelBusy` (see
:mod:`harness.store._labels`). A full disk is waited for, with back-off, up to
``disk_full_wait_s`` (``$HARNESS_DISK_FULL_WAIT_S``, 30 s), then :class:`~harness.errors.DiskFull`
(see :mod:`harness.store._diskfull`).

Reading through a writer (``store.con``, the query helpers) opens the file and keeps it open until
:meth:`Store.release` or :meth:`Store.close`; ``harness run`` never does.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

import duckdb
import pyarrow as pa

from harness.errors import DiskFull, HarnessError, StoreError
from harness.store import _schema as schema
from harness.store._access import CatalogAccess
from harness.store._catalog import (
    STORAGE_COMPATIBILITY,
    connect,
    connect_current,
    create_or_upgrade,
)
from harness.store._compact import CompactStats, compact
from harness.store._damage import scan
from harness.store._diskfull import DiskPatience, is_disk_full
from harness.store._rows import is_data_frame, normalize_table, prepare_row
from harness.store._runs import RunLifecycle, RunStatus
from harness.store._shards import ShardWriter, runs_dir
from harness.store._streams import SpanStreams
from harness.store._views import skip_shards

if TYPE_CHECKING:  # a run never imports pandas (~55 MB): see _rows.is_data_frame
    import pandas as pd

__all__ = ["DEFAULT_DB", "LOCK_WAIT_S", "STORAGE_COMPATIBILITY", "RunStatus", "Store"]


log = logging.getLogger("harness.store")

DEFAULT_DB = Path("reports/harness.duckdb")
#: How long an open waits for another process's hold on the file (a writer's moment, a reader).
LOCK_WAIT_S = 10.0

# Writers open in this process, by resolved path (a reader here shares the writer's database).
_WRITERS: dict[Path, list[Store]] = {}
_WRITERS_LOCK = threading.RLock()


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


class Store:
    """A handle on the results database. Build one with :meth:`open`.

    It writes results itself (queued into :attr:`shards`) and holds one part per other job:
    the way into the DuckDB file (:class:`~harness.store._access.CatalogAccess`), the runs it
    opened and their label locks (:class:`~harness.store._runs.RunLifecycle`), and the span
    files it loads (:class:`~harness.store._streams.SpanStreams`)."""

    def __init__(
        self,
        path: Path,
        con: duckdb.DuckDBPyConnection | None,
        *,
        read_only: bool,
        lock_timeout_s: float = LOCK_WAIT_S,
        flush_after_s: float = 0.5,
        disk_full_wait_s: float | None = None,
    ) -> None:
        self.path = path
        self.read_only = read_only
        self.lock_timeout_s = lock_timeout_s
        self.runs = runs_dir(path)
        #: The full-disk streak every write of this store shares (:mod:`._diskfull`).
        self.disk = DiskPatience(disk_full_wait_s)
        self.shards = (
            None if read_only else ShardWriter(self.runs, max_age_s=flush_after_s, disk=self.disk)
        )
        # The store's three jobs besides writing results: the file, the runs, the span files.
        self._access = CatalogAccess(
            path, con, read_only=read_only, lock_timeout_s=lock_timeout_s, disk=self.disk
        )
        self._runs = RunLifecycle(self._access, self.shards)
        self._spans = SpanStreams(self._access, self.shards, self._runs)

    # --- opening and closing -------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | Path = DEFAULT_DB,
        *,
        read_only: bool = False,
        migrations: Sequence[schema.Migration] | None = None,
        lock_timeout_s: float = LOCK_WAIT_S,
        flush_after_s: float = 0.5,
        disk_full_wait_s: float | None = None,
    ) -> Store:
        """Open (creating or upgrading as needed) the database at ``path``.

        ``read_only`` opens an existing file for queries; an older file is upgraded first (which
        needs the write lock for a moment). ``migrations`` replaces the shipped list (tests).
        ``lock_timeout_s``: how long to wait while another process holds the file.
        ``disk_full_wait_s``: how long a write waits for room on a full disk before
        :class:`~harness.errors.DiskFull` (default ``$HARNESS_DISK_FULL_WAIT_S``, else 30 s).

        A writer moves damaged shards to quarantine first; a reader moves nothing, and leaves
        them out of its views with a warning naming each file (see :mod:`._damage`).
        """
        path = Path(path).expanduser().resolve()
        steps = schema.MIGRATIONS if migrations is None else migrations
        # A damaged shard is kept out of every view: a writer quarantines it, a reader skips it.
        damaged = [d.file for d in scan(runs_dir(path), move=not read_only)]
        with _WRITERS_LOCK:
            writers = _WRITERS.get(path)
            if read_only and writers:
                cursor = writers[0].con.cursor()
                cursor.execute("SET TimeZone = 'UTC'")
                if damaged:
                    skip_shards(cursor, runs_dir(path), damaged)
                return cls(path, cursor, read_only=True)  # closing it closes only the cursor
            if read_only:
                reader = cls._open_reader(path, steps, lock_timeout_s, damaged)
                if damaged and reader._access.held is not None:
                    skip_shards(reader._access.held, reader.runs, damaged)
                return reader
            path.parent.mkdir(parents=True, exist_ok=True)
            store = cls(
                path, None, read_only=False, lock_timeout_s=lock_timeout_s,
                flush_after_s=flush_after_s, disk_full_wait_s=disk_full_wait_s,
            )  # fmt: skip
            live = {r for s in _WRITERS.get(path, []) for r in s._runs.open}
            store.disk.call(
                lambda: create_or_upgrade(path, store.runs, steps, lock_timeout_s, live),
                f"opening {path}",
            )
            _WRITERS.setdefault(path, []).append(store)
            return store

    @classmethod
    def _open_reader(
        cls, path: Path, steps: Sequence[schema.Migration], wait_s: float, skip: list[Path]
    ) -> Store:
        con = connect_current(path, runs_dir(path), steps, wait_s, skip)
        if con is not None:
            return cls(path, con, read_only=True, lock_timeout_s=wait_s)
        cls.open(path, migrations=steps, lock_timeout_s=wait_s).close()  # an older file: upgrade
        return cls(path, connect(path, True, wait_s), read_only=True, lock_timeout_s=wait_s)

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        """A connection for queries. On a writer, queued rows are written first, and the file
        stays open (other processes wait) until :meth:`release` or :meth:`close`."""
        with self._access.mutex:
            self._access.check_open()
            self._flush()
            return self._access.hold()

    def release(self) -> None:
        """Close the connection :attr:`con` opened on a writer, so other processes get in."""
        self._access.release()

    def close(self, status: RunStatus = "finished") -> None:
        """Write what is queued and close; runs this store began and did not finish get
        ``status``."""
        with self._access.mutex:
            if self._access.closed:
                return
            try:
                if self.shards is not None:
                    try:
                        self.shards.close()
                    except BaseException as exc:  # the last rows are lost: the runs failed
                        self._runs.finish_all("failed", error=f"rows not written: {exc}")
                        raise
                self._runs.finish_all(status)
            finally:
                self._runs.release_labels()
                self._access.close()
                if not self.read_only:
                    with _WRITERS_LOCK:
                        writers = _WRITERS.get(self.path, [])
                        if self in writers:
                            writers.remove(self)
                        if not writers:
                            _WRITERS.pop(self.path, None)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.close("finished")
        elif issubclass(exc_type, KeyboardInterrupt | SystemExit | asyncio.CancelledError):
            self.close("interrupted")
        else:
            self.close("failed")

    def _flush(self) -> None:
        if self.shards is not None:
            self.shards.flush()

    # --- runs and span files ----------------------------------------------------------------

    def begin_run(
        self,
        *,
        label: str | None = None,
        suites: Sequence[str] = (),
        modes: Sequence[str] = (),
        providers: Sequence[str] = (),
        epochs: int | None = None,
        config: Mapping[str, Any] | None = None,
        git_sha: str | None = None,
        harness_version: str | None = None,
        run_id: str | None = None,
        resume: bool = False,
    ) -> str:
        """Start a run (a ``bench_runs`` row with status ``running``) and return its id.

        With ``resume=True`` and a ``label``, the latest run of that label is reopened instead
        (status back to ``running``, its suites/modes/providers extended with these) and its id
        returned, so the resumed cells land in the same run; without such a run, a new one.

        A ``label`` is run by one process at a time: its lock is taken before anything else and
        held until :meth:`finish_run`; another process holding it raises
        :class:`~harness.errors.LabelBusy` naming that process (see :mod:`._labels`).
        """
        return self._runs.begin(
            label=label, suites=suites, modes=modes, providers=providers, epochs=epochs,
            config=config, git_sha=git_sha, harness_version=harness_version, run_id=run_id,
            resume=resume,
        )  # fmt: skip

    def discard_run(self, run_id: str) -> bool:
        """Delete a run that stored nothing (it failed before its first cell), so that
        ``--run latest`` never picks it; returns whether it was deleted (not when the disk is
        full: the run then stays, and is closed ``failed``)."""
        return self._runs.discard(run_id)

    def finish_run(
        self, run_id: str, status: RunStatus = "finished", *, error: str | None = None
    ) -> None:
        """Close a run: ``finished_at`` now and ``status`` (finished, interrupted or failed).

        Queued rows are written first. When another process holds the file past
        ``lock_timeout_s``, the ending is written to the run's ``finish.json`` instead (with a
        warning); the next writer to open the file records it. The run's label is free again
        afterwards.

        A disk full past the budget: the rows still queued are lost (their cells run again on
        ``--resume``), the run is ``failed`` with an error naming the disk (written after
        freeing the store's reserve, see :func:`~harness.store._diskfull.spend_reserve`; when
        even that does not fit, the next writer marks the run ``interrupted``), and
        :class:`DiskFull` is raised."""
        self._runs.finish(run_id, status, error=error)

    def follow_spans(
        self, run_id: str, path: str | Path, *, scrub: Callable[[str], str] | None = None
    ) -> None:
        """Stream span file ``path`` into ``run_id``'s shards from its current end: what is
        appended becomes shards as the run goes (``scrub`` cleans each piece of text first).
        :meth:`ingest_spans` of the same file converts the rest and stops following."""
        self._spans.follow(run_id, path, scrub=scrub)

    def ingest_spans(self, run_id: str, path: str | Path, *, only_run_traces: bool = False) -> int:
        """Load a JSON-lines span file under ``run_id`` as a shard; return the spans added.

        A file given to :meth:`follow_spans` is finished (the total it added is returned).
        Otherwise the whole file is read: spans already stored for the run (same trace and span
        id) are skipped, so ingesting a file twice, or a file that grew, adds only the new
        spans; torn lines are skipped. ``only_run_traces`` keeps only spans whose trace id is a
        ``results.trace_id`` of the run (for a span file shared by many runs)."""
        return self._spans.ingest(run_id, path, only_run_traces=only_run_traces)

    # --- compaction ----------------------------------------------------------------------------

    def compact(self, run_ids: Sequence[str] | None = None, *, wait: bool = True) -> CompactStats:
        """Move the shards of runs that ended (of ``run_ids``) into the tables. A full disk is
        waited out with the store's back-off (``HARNESS_DISK_FULL_WAIT_S``; ``wait=False``: not
        at all), then raises :class:`DiskFull`. Nothing is lost either way: each batch of shards
        is committed in one transaction, and the shards not committed stay and are read."""
        self._flush()
        so_far = CompactStats()  # a try the full disk cut short: its committed batches count

        def moment(con: duckdb.DuckDBPyConnection) -> CompactStats:
            return compact(con, self.runs.resolve(), run_ids, so_far)

        if wait:
            stats: CompactStats = self._access.run("compacting", moment)
            return stats
        try:
            with self._access.moment() as con:
                return moment(con)
        except (duckdb.Error, OSError, StoreError) as exc:
            if is_disk_full(exc) and not isinstance(exc, DiskFull):
                raise DiskFull(f"compacting {self.path}: the disk is full: {exc}") from exc
            raise

    def compact_or_warn(self) -> None:
        """:meth:`compact`, where a failure only warns (what ``harness run`` does at its end):
        the shards stay readable, and the next run or ``harness compact`` compacts them."""
        try:
            stats = self.compact(wait=False)  # the run has ended: its rows are safe as shards
        except (HarnessError, OSError) as exc:
            log.warning("harness: not compacted (run `harness compact` later): %s", exc)
            return
        for why in stats.skipped:
            log.warning("harness: left as shards: %s", why)

    # --- results -------------------------------------------------------------------------------

    def write_result(self, row: Mapping[str, Any]) -> None:
        """Store one finished cell: checked now, on disk within ``flush_after_s`` (+0.1 s)."""
        self.write_prepared(prepare_row(row))

    def write_prepared(self, prepared: Mapping[str, Any]) -> None:
        """Store one row :func:`~harness.store._rows.prepare_row` checked already (a caller
        that tells a row's own faults from the store's: ``harness run``'s sink)."""
        self._runs.check({prepared["run_id"]})
        assert self.shards is not None
        self.shards.add(dict(prepared))

    def write_results(self, rows: Iterable[Mapping[str, Any]] | pd.DataFrame | pa.Table) -> int:
        """Store many results as one shard, on disk before this returns.

        ``rows`` are mappings (see :mod:`harness.store._rows`), or a DataFrame / Arrow table whose
        columns are ``results`` columns (JSON columns as JSON text). Returns the rows written.
        """
        if is_data_frame(rows):
            rows = pa.Table.from_pandas(rows, preserve_index=False)
        if isinstance(rows, pa.Table):
            if rows.num_rows == 0:
                return 0
            table = normalize_table(rows)
            run_ids = {str(r) for r in table.column("run_id").unique().to_pylist()}
            data: pa.Table | list[dict[str, Any]] = table
        else:
            now = _now()
            data = [prepare_row(r, n, now) for n, r in enumerate(rows)]
            if not data:
                return 0
            run_ids = {r["run_id"] for r in data}
        self._runs.check(run_ids)
        assert self.shards is not None
        return self.shards.write_now(data)

    def existing_cells(
        self, label: str, *, include_crashed: bool = True, status: str | None = None
    ) -> set[str]:
        """The ``cell_key`` of every cell already stored for runs labelled ``label`` (for
        ``--resume``). ``include_crashed=False`` leaves out cells whose latest result crashed or
        errored, so they run again; ``status`` keeps only cells whose latest result has that
        status (``error`` for ``--retry-errors``)."""
        where = "" if include_crashed else " AND error IS NULL AND status IS DISTINCT FROM 'error'"
        params: list[Any] = [label]
        if status is not None:
            where += " AND status = ?"
            params.append(status)
        sql = f"SELECT cell_key FROM v_cells WHERE label = ?{where}"
        if self.read_only:
            rows = self.con.execute(sql, params).fetchall()
        else:
            self._flush()
            rows = self._access.run(
                "looking up cells", lambda con: con.execute(sql, params).fetchall(), writes=False
            )
        return {str(r[0]) for r in rows}
