"""A fault found by adversary round 16, part B (issue 34): readers make the empty schema shards
of a runs folder that lacks them (round 15's ``_schema_made``), all under one temporary name;
two at once moved each other's file away (``FileNotFoundError``: 34 of 180 writers in 30 tries
of 6 processes), and such a reader then asked a writer, which waited on the other readers'
hold and said the file was in use. Fails on 119c2ef."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pyarrow.parquet as pq


def _write(runs: str, barrier: multiprocessing.synchronize.Barrier) -> None:
    from harness.store._shards import write_schema_files

    barrier.wait()
    write_schema_files(Path(runs))  # raises in the child: its exit code says so


def test_readers_making_the_schema_shards_at_once_do_not_collide(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    for attempt in range(10):
        runs = tmp_path / f"runs{attempt}"
        runs.mkdir()
        barrier = context.Barrier(6)
        workers = [context.Process(target=_write, args=(str(runs), barrier)) for _ in range(6)]
        for w in workers:
            w.start()
        for w in workers:
            w.join(60)
        assert [w.exitcode for w in workers] == [0] * 6
        for kind in ("results", "spans"):
            pq.read_schema(runs / "_schema" / f"{kind}-schema.parquet")
        assert not list((runs / "_schema").glob(".*.tmp"))
