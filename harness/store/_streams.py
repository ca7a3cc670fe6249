"""The span methods of :class:`~harness.store._writer.Store`: a span file streamed into span
shards as a run goes (:meth:`SpanStreams.follow_spans`), or loaded whole
(:meth:`SpanStreams.ingest_spans`)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path

import duckdb

from harness.errors import StoreError
from harness.store._shards import ShardWriter
from harness.store._spans import new_spans_to_parquet

__all__ = ["SpanStreams"]


class SpanStreams:
    """Mixed into :class:`~harness.store._writer.Store`, which provides the attributes and the
    methods below that raise NotImplementedError here."""

    shards: ShardWriter | None
    read_only: bool

    def _check_run(self, run_id: str) -> None:
        raise NotImplementedError

    def _flush(self) -> None:
        raise NotImplementedError

    def _catalog(self) -> contextlib.AbstractContextManager[duckdb.DuckDBPyConnection]:
        raise NotImplementedError

    def follow_spans(
        self, run_id: str, path: str | Path, *, scrub: Callable[[str], str] | None = None
    ) -> None:
        """Stream span file ``path`` into ``run_id``'s shards from its current end: what is
        appended becomes shards as the run goes (``scrub`` cleans each piece of text first).
        :meth:`ingest_spans` of the same file converts the rest and stops following."""
        self._check_run(run_id)
        assert self.shards is not None
        self.shards.follow(run_id, Path(path), scrub=scrub)

    def ingest_spans(self, run_id: str, path: str | Path, *, only_run_traces: bool = False) -> int:
        """Load a JSON-lines span file under ``run_id`` as a shard; return the spans added.

        A file given to :meth:`follow_spans` is finished (the total it added is returned).
        Otherwise the whole file is read: spans already stored for the run (same trace and span
        id) are skipped, so ingesting a file twice, or a file that grew, adds only the new
        spans; torn lines are skipped. ``only_run_traces`` keeps only spans whose trace id is a
        ``results.trace_id`` of the run (for a span file shared by many runs)."""
        path = Path(path)
        assert self.shards is not None or self.read_only
        if self.shards is not None and (run_id, path.resolve()) in self.shards.followers:
            follower = self.shards.unfollow(run_id, path)
            return 0 if follower is None else follower.spans
        if not path.is_file():
            raise StoreError(f"no span file at {path}")
        self._check_run(run_id)
        self._flush()
        assert self.shards is not None
        dest = self.shards.shard_path("spans", run_id)
        tmp = dest.with_name(f".{dest.name}.tmp")
        try:
            with self._catalog() as con:
                n = new_spans_to_parquet(con, path, tmp, run_id, only_run_traces=only_run_traces)
            if n:
                os.replace(tmp, dest)
            return n
        except duckdb.Error as exc:
            raise StoreError(f"cannot ingest spans from {path}: {exc}") from exc
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink()
