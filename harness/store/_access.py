"""A store's way into its DuckDB file: a connection held for queries, or one opened for a
moment and closed again, so that other processes get in between (see :mod:`._writer`).

:class:`CatalogAccess` is the one place that opens the catalog for a store once it is open: the
run bookkeeping (:mod:`._runs`), the span loading (:mod:`._streams`) and the store itself go
through it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import duckdb

from harness.errors import StoreError
from harness.store._catalog import connect
from harness.store._diskfull import DiskPatience

__all__ = ["CatalogAccess"]


class CatalogAccess:
    """The catalog file of one store: the held connection (if any), the lock its users share,
    and whether the store is closed or read-only."""

    def __init__(
        self,
        path: Path,
        con: duckdb.DuckDBPyConnection | None,
        *,
        read_only: bool,
        lock_timeout_s: float,
        disk: DiskPatience,
    ) -> None:
        self.path = path
        self.read_only = read_only
        self.lock_timeout_s = lock_timeout_s
        #: The full-disk streak every write of the store shares (:mod:`._diskfull`).
        self.disk = disk
        #: Taken by every use of the file (re-entrant: closing a store finishes its runs).
        self.mutex = threading.RLock()
        self.closed = False
        self._con = con

    @property
    def held(self) -> duckdb.DuckDBPyConnection | None:
        """The connection kept open (a reader's, or a writer's since :meth:`hold`), if any."""
        return self._con

    def hold(self) -> duckdb.DuckDBPyConnection:
        """The connection for queries, opened now on a writer and kept until :meth:`release`."""
        with self.mutex:
            self.check_open()
            if self._con is None:
                self._con = connect(self.path, False, self.lock_timeout_s)
            return self._con

    def release(self) -> None:
        """Close the connection a writer holds, so other processes get in."""
        with self.mutex:
            if self._con is not None and not self.read_only:
                self._con.close()
                self._con = None

    def check_open(self) -> None:
        if self.closed:
            raise StoreError(f"{self.path}: the store is closed")

    def check_writable(self) -> None:
        self.check_open()
        if self.read_only:
            raise StoreError(f"{self.path}: opened read-only")

    @contextlib.contextmanager
    def moment(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """The database for a moment: the held connection if any, else one opened and closed."""
        with self.mutex:
            self.check_writable()
            if self._con is not None:
                yield self._con
                return
            con = connect(self.path, False, self.lock_timeout_s)
            try:
                yield con
            finally:
                con.close()

    def run(
        self, what: str, fn: Callable[[duckdb.DuckDBPyConnection], Any], *, writes: bool = True
    ) -> Any:
        """``fn(con)`` in one :meth:`moment`, tried again while the disk is full (a failed
        statement is rolled back, so trying again is safe)."""

        def once() -> Any:
            with self.moment() as con:
                return fn(con)

        return self.disk.call(once, f"{what} ({self.path})", writes=writes)

    def close(self) -> None:
        """Mark the store closed and close the held connection."""
        with self.mutex:
            self.closed = True
            if self._con is not None:
                self._con.close()
                self._con = None
