"""A span file followed into span shards as it grows: each look converts the whole lines
appended since the last one, a bounded piece at a time, into one shard of the run (see
:mod:`harness.store._shards`, whose writer thread does the looking)."""

from __future__ import annotations

import contextlib
import errno
import os
import time
from collections.abc import Callable
from pathlib import Path

import duckdb

from harness._files import open_input, open_regular, own_folder
from harness.store._schema import NO_DOWNLOADS
from harness.store._spans import spans_to_parquet

__all__ = ["SpanFollower"]

#: Largest piece of a span file converted at once (bounds memory, whatever the file's size).
#: 4 MB holds a 0.5 s tick of a 500 cells/s run; 16 MB peaked ~30 MB higher at 50,000 cells.
SPAN_CHUNK_BYTES = 4 * 1024 * 1024
#: The follower's DuckDB returns freed memory to the system past this much (DuckDB's default,
#: 128 MB, kept the peak of converting one piece for the rest of the run).
ALLOCATOR_FLUSH = "8MB"


class SpanFollower:
    """Turns what is appended to a span file into span shards of one run."""

    def __init__(
        self,
        run_id: str,
        path: Path,
        folder: Path,
        name: Callable[[str], Path],
        *,
        scrub: Callable[[str], str] | None = None,
        offset: int | None = None,
    ) -> None:
        self.run_id = run_id
        self.path = path
        self.folder = folder
        self._name = name
        self._scrub = scrub
        self.offset = path.stat().st_size if offset is None and path.exists() else (offset or 0)
        self.spans = 0
        self.last_poll = time.monotonic()
        self._con: duckdb.DuckDBPyConnection | None = None

    def pending(self) -> bool:
        try:
            return self.path.stat().st_size > self.offset
        except OSError:
            return False

    def poll(self, *, fsync: bool = True) -> int:
        """Convert every whole line appended since the last poll; return the spans added."""
        self.last_poll = time.monotonic()
        added = 0
        while True:
            try:
                with open_input(self.path) as f:
                    f.seek(self.offset)
                    data = f.read(SPAN_CHUNK_BYTES)
            except FileNotFoundError:
                return added
            except OSError as exc:  # a device or a FIFO (--trace-file /dev/zero): not read
                if exc.errno == errno.EINVAL:  # back (/dev/zero's endless zeros, read as
                    return added  # one endless line, held the run at its end for ever)
                raise
            end = data.rfind(b"\n") + 1
            if end == 0:
                if len(data) == SPAN_CHUNK_BYTES:  # one line longer than a chunk: skip it
                    self.offset += len(data)
                    continue
                return added
            added += self._convert(data[:end], fsync=fsync)
            self.offset += end
            if len(data) < SPAN_CHUNK_BYTES:  # read to the end of the file
                return added

    def _convert(self, data: bytes, *, fsync: bool) -> int:
        if self._scrub is not None:
            text = data.decode("utf-8", "surrogateescape")
            data = self._scrub(text).encode("utf-8", "surrogateescape")
        own_folder(self.folder)
        dest = self._name("spans")
        lines = dest.with_name(f".{dest.stem}.jsonl.tmp")
        tmp = dest.with_name(f".{dest.name}.tmp")
        try:
            with os.fdopen(open_regular(lines, os.O_WRONLY | os.O_CREAT, truncate=True), "wb") as f:
                f.write(data)
            if self._con is None:
                self._con = duckdb.connect(
                    config={
                        **NO_DOWNLOADS,
                        "threads": 1,
                        "allocator_flush_threshold": ALLOCATOR_FLUSH,
                        "allocator_bulk_deallocation_flush_threshold": ALLOCATOR_FLUSH,
                    }
                )
                self._con.execute("SET TimeZone = 'UTC'")
            n = spans_to_parquet(self._con, lines, tmp, self.run_id)
            if n:
                if fsync:
                    with tmp.open("rb+") as f:
                        os.fsync(f.fileno())
                os.replace(tmp, dest)
            self.spans += n
            return n
        finally:
            for leftover in (lines, tmp):
                with contextlib.suppress(OSError):
                    leftover.unlink()

    def close(self) -> None:
        if self._con is not None:
            self._con.close()
            self._con = None
