"""The results store: one DuckDB file (default ``reports/harness.duckdb``) that accumulates runs.

    with Store.open("reports/harness.duckdb") as store:
        run_id = store.begin_run(label="nightly", suites=["arithmetic"], modes=["react"], ...)
        store.write_result(result_row(result, run_id=run_id, suite=..., passed=...))  # per cell
        store.ingest_spans(run_id, "reports/traces.jsonl")
        store.finish_run(run_id)

One writer at a time: DuckDB lets one process open a file for writing (and no other process
open it at all meanwhile); a second writer, in another process or this one, gets
:class:`StoreLocked` naming the holder's PID. Every ``write_result`` is its own committed
transaction, so a run killed mid-matrix keeps every cell it finished. A run left ``running`` by a
killed process is marked ``interrupted`` by the next writer to open the file.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket
import threading
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self

import duckdb
import pandas as pd
import pyarrow as pa

from harness._version import __version__
from harness.store import _locking as locking
from harness.store import _schema as schema
from harness.store._rows import insert_select_list, json_text, rows_to_arrow
from harness.store._spans import ingest_span_file
from harness.store.errors import StoreError

__all__ = ["DEFAULT_DB", "STORAGE_COMPATIBILITY", "RunStatus", "Store"]

log = logging.getLogger("harness.store")

DEFAULT_DB = Path("reports/harness.duckdb")
#: The storage format a new file is written in: DuckDB 2's own format cannot be read by 1.x, and
#: the DuckDB CLI on PyPI (duckdb-cli) is 1.5; this one is readable by DuckDB >= 1.4.
STORAGE_COMPATIBILITY = "v1.4.0"
RunStatus = Literal["finished", "interrupted", "failed"]

# Writers open in this process, by resolved path: DuckDB lets one process open a file twice.
_WRITERS: dict[Path, Store] = {}
_WRITERS_LOCK = threading.RLock()


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def _connect(path: Path, read_only: bool) -> duckdb.DuckDBPyConnection:
    config: dict[str, str | bool | int | float | list[str]] = (
        {} if read_only else {"storage_compatibility_version": STORAGE_COMPATIBILITY}
    )
    try:
        con = duckdb.connect(str(path), read_only=read_only, config=config)
    except duckdb.IOException as exc:
        if "lock" in str(exc).lower():
            raise locking.locked_error(path, exc) from exc
        raise StoreError(f"cannot open {path}: {exc}") from exc
    except duckdb.ConnectionException as exc:  # this process has it open with another config
        raise locking.locked_error(path, exc) from exc
    except duckdb.Error as exc:
        raise StoreError(f"cannot open {path}: {exc}") from exc
    con.execute("SET TimeZone = 'UTC'")
    return con


class Store:
    """A handle on the results database. Build one with :meth:`open`."""

    def __init__(
        self, path: Path, con: duckdb.DuckDBPyConnection, *, read_only: bool, shared: bool = False
    ) -> None:
        self.path = path
        self.con = con
        self.read_only = read_only
        self._shared = shared  # a cursor on this process's writer: closing it closes only that
        self._mutex = threading.RLock()
        self._open_runs: set[str] = set()
        self._closed = False

    # --- opening and closing -------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | Path = DEFAULT_DB,
        *,
        read_only: bool = False,
        migrations: Sequence[schema.Migration] | None = None,
    ) -> Store:
        """Open (creating or upgrading as needed) the database at ``path``.

        ``read_only`` opens an existing file for queries; an older file is upgraded first (which
        needs the write lock for a moment). ``migrations`` replaces the shipped list (tests).
        """
        path = Path(path).expanduser().resolve()
        steps = schema.MIGRATIONS if migrations is None else migrations
        with _WRITERS_LOCK:
            writer = _WRITERS.get(path)
            if writer is not None:
                if not read_only:
                    raise locking.locked_error(path)
                cursor = writer.con.cursor()
                cursor.execute("SET TimeZone = 'UTC'")
                return cls(path, cursor, read_only=True, shared=True)
            if read_only:
                return cls._open_reader(path, steps)
            path.parent.mkdir(parents=True, exist_ok=True)
            store = cls(path, _connect(path, read_only=False), read_only=False)
            try:
                locking.write_lock(path)
                try:
                    before, after = schema.migrate(store.con, steps, where=str(path))
                except duckdb.Error as exc:
                    raise StoreError(
                        f"cannot create or upgrade the schema of {path}: {exc}"
                    ) from exc
                if before and before != after:
                    log.info("harness: upgraded %s from schema v%d to v%d", path, before, after)
                schema.create_views(store.con)
                store._recover_stale_runs()
            except BaseException:
                store.con.close()
                locking.release_lock(path)
                raise
            _WRITERS[path] = store
            return store

    @classmethod
    def _open_reader(cls, path: Path, steps: Sequence[schema.Migration]) -> Store:
        if not path.exists():
            raise StoreError(f"no results database at {path}: `harness run` creates it")
        con = _connect(path, read_only=True)
        try:
            found = schema.schema_version(con)
            schema.check_version(found, len(steps), str(path))
        except BaseException:
            con.close()
            raise
        if found == len(steps):
            return cls(path, con, read_only=True)
        con.close()  # an older file: upgrade it (needs the write lock), then read
        cls.open(path, migrations=steps).close()
        return cls(path, _connect(path, read_only=True), read_only=True)

    def close(self, status: RunStatus = "finished") -> None:
        """Close the database; runs this store began and did not finish get ``status``."""
        with self._mutex:
            if self._closed:
                return
            try:
                for run_id in sorted(self._open_runs):
                    self.finish_run(run_id, status)
            finally:
                self._closed = True
                self.con.close()
                if not self.read_only and not self._shared:
                    with _WRITERS_LOCK:
                        if _WRITERS.get(self.path) is self:
                            del _WRITERS[self.path]
                    locking.release_lock(self.path)

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

    def _writable(self) -> duckdb.DuckDBPyConnection:
        if self._closed:
            raise StoreError(f"{self.path}: the store is closed")
        if self.read_only:
            raise StoreError(f"{self.path}: opened read-only")
        return self.con

    def _recover_stale_runs(self) -> None:
        """Runs still ``running`` when a writer opens the file belong to a dead process (DuckDB
        lets one writer in): mark them interrupted, finished at their last result."""
        self.con.execute(
            """
            UPDATE bench_runs b SET status = 'interrupted',
                finished_at = coalesce(
                    (SELECT max(r.finished_at) FROM results r WHERE r.run_id = b.run_id),
                    b.started_at),
                error = coalesce(b.error, 'the process ' || coalesce(b.pid::VARCHAR, '?')
                                 || ' stopped without closing the run')
            WHERE status = 'running'"""
        )

    # --- runs ----------------------------------------------------------------------------------

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
        """
        with self._mutex:
            con = self._writable()
            now = _now()
            if resume and label is not None:
                row = con.execute(
                    "SELECT run_id, suites, modes, providers FROM bench_runs WHERE label = ? "
                    "ORDER BY started_at DESC, run_id DESC LIMIT 1",
                    [label],
                ).fetchone()
                if row is not None:
                    merged = [
                        _merge(old, new)
                        for old, new in zip(row[1:], (suites, modes, providers), strict=True)
                    ]
                    con.execute(
                        "UPDATE bench_runs SET status = 'running', finished_at = NULL, "
                        "error = NULL, resumed = resumed + 1, pid = ?, host = ?, suites = ?, "
                        "modes = ?, providers = ?, epochs = greatest(epochs, ?) WHERE run_id = ?",
                        [os.getpid(), socket.gethostname(), *merged, epochs, row[0]],
                    )
                    self._open_runs.add(row[0])
                    return str(row[0])
            run_id = run_id or f"{now:%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"
            try:
                con.execute(
                    "INSERT INTO bench_runs (run_id, started_at, status, label, git_sha, "
                    "harness_version, suites, modes, providers, epochs, config, pid, host) "
                    "VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        run_id,
                        now,
                        label,
                        git_sha,
                        harness_version or __version__,
                        list(suites),
                        list(modes),
                        list(providers),
                        epochs,
                        json_text(config),
                        os.getpid(),
                        socket.gethostname(),
                    ],
                )
            except duckdb.ConstraintException as exc:
                raise StoreError(f"run {run_id!r} already exists in {self.path}") from exc
            self._open_runs.add(run_id)
            return run_id

    def discard_run(self, run_id: str) -> bool:
        """Delete a run that stored nothing (it failed before its first cell), so that
        ``--run latest`` never picks it; returns whether it was deleted."""
        with self._mutex:
            got = (
                self._writable()
                .execute(
                    "DELETE FROM bench_runs WHERE run_id = ? AND NOT EXISTS "
                    "(SELECT 1 FROM results WHERE run_id = ?)",
                    [run_id, run_id],
                )
                .fetchone()
            )
            deleted = bool(got and got[0])
            if deleted:
                self._open_runs.discard(run_id)
            return deleted

    def finish_run(
        self, run_id: str, status: RunStatus = "finished", *, error: str | None = None
    ) -> None:
        """Close a run: ``finished_at`` now and ``status`` (finished, interrupted or failed)."""
        if status not in ("finished", "interrupted", "failed"):
            raise StoreError(f"finish_run: status must be finished|interrupted|failed: {status!r}")
        with self._mutex:
            got = (
                self._writable()
                .execute(
                    "UPDATE bench_runs SET status = ?, finished_at = ?, error = coalesce(?, error) "
                    "WHERE run_id = ?",
                    [status, _now(), error, run_id],
                )
                .fetchone()
            )
            self._open_runs.discard(run_id)
            if not got or not got[0]:
                raise StoreError(f"no run {run_id!r} in {self.path}")

    # --- results -------------------------------------------------------------------------------

    def write_result(self, row: Mapping[str, Any]) -> None:
        """Store one finished cell, committed before this returns (a crash keeps it)."""
        self.write_results([row])

    def write_results(self, rows: Iterable[Mapping[str, Any]] | pd.DataFrame | pa.Table) -> int:
        """Store many results in one transaction (Arrow registration, not row-by-row INSERTs).

        ``rows`` are mappings (see :mod:`harness.store._rows`), or a DataFrame / Arrow table whose
        columns are ``results`` columns (JSON columns as JSON text). Returns the rows written.
        """
        if isinstance(rows, pd.DataFrame):
            table = pa.Table.from_pandas(rows, preserve_index=False)
        elif isinstance(rows, pa.Table):
            table = rows
        else:
            table = rows_to_arrow(rows)
        if table.num_rows == 0:
            return 0
        select = insert_select_list(table.column_names)
        run_ids = [str(r) for r in table.column("run_id").unique().to_pylist()]
        with self._mutex:
            con = self._writable()
            known = con.execute(
                "SELECT run_id FROM bench_runs WHERE list_contains(?, run_id)", [run_ids]
            ).fetchall()
            unknown = sorted(set(run_ids) - {r[0] for r in known})
            if unknown:
                raise StoreError(f"results for unknown run(s) {unknown}: begin_run first")
            name = f"_harness_rows_{secrets.token_hex(4)}"
            con.register(name, table)
            try:
                con.execute(
                    f"INSERT INTO results BY NAME SELECT {select} FROM {name}", [_now()]
                ).fetchall()
            except duckdb.Error as exc:
                raise StoreError(f"cannot store results in {self.path}: {exc}") from exc
            finally:
                con.unregister(name)
        return int(table.num_rows)

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
        with self._mutex:
            rows = self.con.execute(
                f"SELECT cell_key FROM v_cells WHERE label = ?{where}", params
            ).fetchall()
        return {str(r[0]) for r in rows}

    # --- spans ---------------------------------------------------------------------------------

    def ingest_spans(self, run_id: str, path: str | Path, *, only_run_traces: bool = False) -> int:
        """Bulk-load a JSON-lines span file under ``run_id``; return the spans added (see
        :func:`harness.store._spans.ingest_span_file`)."""
        path = Path(path)
        if not path.is_file():
            raise StoreError(f"no span file at {path}")
        with self._mutex:
            con = self._writable()
            known = con.execute("SELECT 1 FROM bench_runs WHERE run_id = ?", [run_id]).fetchone()
            if known is None:
                raise StoreError(f"no run {run_id!r} in {self.path}")
            try:
                return ingest_span_file(con, run_id, path, only_run_traces=only_run_traces)
            except duckdb.Error as exc:
                raise StoreError(f"cannot ingest spans from {path}: {exc}") from exc


def _merge(old: Sequence[str] | None, new: Sequence[str]) -> list[str]:
    out = list(old or ())
    out.extend(x for x in new if x not in out)
    return out
