"""A store's span files: one streamed into span shards as a run goes
(:meth:`SpanStreams.follow`), or loaded whole (:meth:`SpanStreams.ingest`)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path

import duckdb

from harness.errors import StoreError
from harness.store._access import CatalogAccess
from harness.store._runs import RunLifecycle
from harness.store._shards import ShardWriter
from harness.store._spans import new_spans_to_parquet

__all__ = ["SpanStreams"]


class SpanStreams:
    """Span files into a store's span shards; ``Store.follow_spans`` and ``Store.ingest_spans``
    are these."""

    def __init__(
        self, access: CatalogAccess, shards: ShardWriter | None, runs: RunLifecycle
    ) -> None:
        self._access = access
        self._shards = shards
        self._runs = runs

    def follow(
        self, run_id: str, path: str | Path, *, scrub: Callable[[str], str] | None = None
    ) -> None:
        """Stream ``path`` into ``run_id``'s span shards from its end (``Store.follow_spans``)."""
        self._runs.check_one(run_id)
        assert self._shards is not None
        self._shards.follow(run_id, Path(path), scrub=scrub)

    def ingest(self, run_id: str, path: str | Path, *, only_run_traces: bool = False) -> int:
        """Load a span file under ``run_id``; the spans added (``Store.ingest_spans``)."""
        path = Path(path)
        assert self._shards is not None or self._access.read_only
        if self._shards is not None and (run_id, path.resolve()) in self._shards.followers:
            follower = self._shards.unfollow(run_id, path)
            return 0 if follower is None else follower.spans
        if not path.is_file():
            raise StoreError(f"no span file at {path}")
        self._runs.check_one(run_id)
        assert self._shards is not None  # a read-only store failed the check
        self._shards.flush()
        dest = self._shards.shard_path("spans", run_id)
        tmp = dest.with_name(f".{dest.name}.tmp")
        try:
            with self._access.moment() as con:
                n = new_spans_to_parquet(con, path, tmp, run_id, only_run_traces=only_run_traces)
            if n:
                os.replace(tmp, dest)
            return n
        except duckdb.Error as exc:
            raise StoreError(f"cannot ingest spans from {path}: {exc}") from exc
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink()
