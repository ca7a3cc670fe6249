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
import contextlib
import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

import duckdb
import pyarrow as pa

from harness.errors import DiskFull, HarnessError, StoreError, UnknownRun
from harness.store import _schema as schema
from harness.store._catalog import (
    STORAGE_COMPATIBILITY,
    connect,
    create_in_place,
    recover_stale_runs,
)
from harness.store._compact import CompactStats, compact
from harness.store._damage import scan
from harness.store._diskfull import DiskPatience, is_disk_full, make_reserve
from harness.store._labels import LabelLock
from harness.store._rows import is_data_frame, normalize_table, prepare_row
from harness.store._runs import RunLifecycle, RunStatus
from harness.store._shards import ShardWriter, runs_dir, write_schema_files
from harness.store._streams import SpanStreams

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


class Store(RunLifecycle, SpanStreams):
    """A handle on the results database. Build one with :meth:`open`."""

    def __init__(
        self,
        path: Path,
        con: duckdb.DuckDBPyConnection | None,
        *,
        read_only: bool,
        shared: bool = False,
        lock_timeout_s: float = LOCK_WAIT_S,
        flush_after_s: float = 0.5,
        disk_full_wait_s: float | None = None,
    ) -> None:
        self.path = path
        self.read_only = read_only
        self.lock_timeout_s = lock_timeout_s
        self._con = con
        self._shared = shared  # a cursor on this process's writer: closing it closes only that
        self._mutex = threading.RLock()
        self._open_runs: set[str] = set()
        self._known_runs: set[str] = set()
        self._closed = False
        self.runs = runs_dir(path)
        #: The full-disk streak every write of this store shares (:mod:`._diskfull`).
        self.disk = DiskPatience(disk_full_wait_s)
        self.shards = (
            None if read_only else ShardWriter(self.runs, max_age_s=flush_after_s, disk=self.disk)
        )
        self._labels: dict[str, LabelLock] = {}  # the labels this store runs
        self._run_labels: dict[str, str] = {}  # open run -> its label

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
                    schema.skip_shards(cursor, runs_dir(path), damaged)
                return cls(path, cursor, read_only=True, shared=True)
            if read_only:
                reader = cls._open_reader(path, steps, lock_timeout_s)
                if damaged and reader._con is not None:
                    schema.skip_shards(reader._con, reader.runs, damaged)
                return reader
            path.parent.mkdir(parents=True, exist_ok=True)
            store = cls(
                path, None, read_only=False, lock_timeout_s=lock_timeout_s,
                flush_after_s=flush_after_s, disk_full_wait_s=disk_full_wait_s,
            )  # fmt: skip
            store.disk.call(lambda: store._create(steps), f"opening {path}")
            _WRITERS.setdefault(path, []).append(store)
            return store

    def _create(self, steps: Sequence[schema.Migration]) -> None:
        path = self.path
        if path.exists() or not create_in_place(
            path, lambda con: self._prepare(con, steps), self.lock_timeout_s
        ):
            con = connect(path, False, self.lock_timeout_s)
            try:
                self._prepare(con, steps)
            finally:
                con.close()

    def _prepare(self, con: duckdb.DuckDBPyConnection, steps: Sequence[schema.Migration]) -> None:
        try:
            found = schema.schema_version(con)
            schema.check_version(found, len(steps), str(self.path))
            if found != len(steps):
                schema.drop_views(con)
            before, after = schema.migrate(con, steps, where=str(self.path))
            write_schema_files(self.runs)
            schema.create_views(con, self.runs)
        except duckdb.Error as exc:
            raise StoreError(f"cannot create or upgrade the schema of {self.path}: {exc}") from exc
        except OSError as exc:
            raise StoreError(f"cannot create {self.runs}: {exc}") from exc
        make_reserve(self.runs)
        if before and before != after:
            log.info("harness: upgraded %s from schema v%d to v%d", self.path, before, after)
        live = {r for s in _WRITERS.get(self.path, []) for r in s._open_runs}
        recover_stale_runs(con, self.runs, live)

    @classmethod
    def _open_reader(cls, path: Path, steps: Sequence[schema.Migration], wait_s: float) -> Store:
        if not path.exists():
            raise StoreError(f"no results database at {path}: `harness run` creates it")
        con = connect(path, True, wait_s)
        try:
            found = schema.schema_version(con)
            schema.check_version(found, len(steps), str(path))
        except BaseException:
            con.close()
            raise
        if found == len(steps):
            return cls(path, con, read_only=True, lock_timeout_s=wait_s)
        con.close()  # an older file: upgrade it (needs the write lock), then read
        cls.open(path, migrations=steps, lock_timeout_s=wait_s).close()
        return cls(path, connect(path, True, wait_s), read_only=True, lock_timeout_s=wait_s)

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        """A connection for queries. On a writer, queued rows are written first, and the file
        stays open (other processes wait) until :meth:`release` or :meth:`close`."""
        with self._mutex:
            if self._closed:
                raise StoreError(f"{self.path}: the store is closed")
            if self.shards is not None:
                self._flush()
            if self._con is None:
                self._con = connect(self.path, False, self.lock_timeout_s)
            return self._con

    def release(self) -> None:
        """Close the connection :attr:`con` opened on a writer, so other processes get in."""
        with self._mutex:
            if self._con is not None and not self.read_only:
                self._con.close()
                self._con = None

    def _in_catalog(
        self, what: str, fn: Callable[[duckdb.DuckDBPyConnection], Any], *, writes: bool = True
    ) -> Any:
        """``fn(con)`` in one catalog moment, tried again while the disk is full (a failed
        statement is rolled back, so trying again is safe)."""

        def moment() -> Any:
            with self._catalog() as con:
                return fn(con)

        return self.disk.call(moment, f"{what} ({self.path})", writes=writes)

    @contextlib.contextmanager
    def _catalog(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """The database for a moment: the held connection if any, else one opened and closed."""
        with self._mutex:
            self._writable()
            if self._con is not None:
                yield self._con
                return
            con = connect(self.path, False, self.lock_timeout_s)
            try:
                yield con
            finally:
                con.close()

    def close(self, status: RunStatus = "finished") -> None:
        """Write what is queued and close; runs this store began and did not finish get
        ``status``."""
        with self._mutex:
            if self._closed:
                return
            try:
                if self.shards is not None:
                    try:
                        self.shards.close()
                    except BaseException as exc:  # the last rows are lost: the runs failed
                        for run_id in sorted(self._open_runs):
                            with contextlib.suppress(Exception):
                                self.finish_run(run_id, "failed", error=f"rows not written: {exc}")
                        raise
                for run_id in sorted(self._open_runs):
                    self.finish_run(run_id, status)
            finally:
                for lock in self._labels.values():
                    lock.release()
                self._labels.clear()
                self._closed = True
                if self._con is not None:
                    self._con.close()
                    self._con = None
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

    def _writable(self) -> None:
        if self._closed:
            raise StoreError(f"{self.path}: the store is closed")
        if self.read_only:
            raise StoreError(f"{self.path}: opened read-only")

    def _flush(self) -> None:
        if self.shards is not None:
            self.shards.flush()

    # --- runs ----------------------------------------------------------------------------------

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
            stats: CompactStats = self._in_catalog("compacting", moment)
            return stats
        try:
            with self._catalog() as con:
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
        prepared = prepare_row(row)
        self._check_runs({prepared["run_id"]})
        assert self.shards is not None
        self.shards.add(prepared)

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
        self._check_runs(run_ids)
        assert self.shards is not None
        return self.shards.write_now(data)

    def _check_run(self, run_id: str) -> None:
        try:
            self._check_runs({run_id})
        except UnknownRun:
            raise UnknownRun(f"no run {run_id!r} in {self.path}") from None

    def _check_runs(self, run_ids: set[str]) -> None:
        self._writable()
        unknown = run_ids - self._known_runs
        if not unknown:
            return
        known = self._in_catalog(
            "looking up runs",
            lambda con: con.execute(
                "SELECT run_id FROM bench_runs WHERE list_contains(?, run_id)", [sorted(unknown)]
            ).fetchall(),
            writes=False,
        )
        self._known_runs.update(r[0] for r in known)
        missing = sorted(run_ids - self._known_runs)
        if missing:
            raise UnknownRun(f"results for unknown run(s) {missing}: begin_run first")

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
            rows = self._in_catalog(
                "looking up cells", lambda con: con.execute(sql, params).fetchall(), writes=False
            )
        return {str(r[0]) for r in rows}
