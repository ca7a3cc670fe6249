"""A fault found by adversary round 20, part B (issue 34): a transcript edited into the store by
hand as a zlib bomb (3 MB that inflate to 3 GB) was inflated whole by the viewer's cell page and
by its search (every transcript of the run): the viewer grew to 3 GB before a ``MemoryError``
under a 6 GB limit, the machine's memory without one. A transcript is inflated to at most
``MAX_TRANSCRIPT_BYTES`` now (past it: unreadable, as a damaged one). Fails on 218441d."""

from __future__ import annotations

import tracemalloc
import zlib
from pathlib import Path

from harness.store import Store, decode_transcript
from harness.store._search import transcript_texts
from harness.store._transcript import encode_transcript
from tests.e2e.edited_store import edited, store_two_cells

MAX_TRANSCRIPT_BYTES = 128 << 20  # harness.store._transcript.MAX_TRANSCRIPT_BYTES


def _bomb(megabytes: int) -> bytes:
    squeeze = zlib.compressobj(1)
    parts = [squeeze.compress(b'{"v":1,"messages":[{"role":"user","content":"')]
    chunk = b"a" * (1 << 20)
    parts += [squeeze.compress(chunk) for _ in range(megabytes)]
    parts += [squeeze.compress(b'"}],"cut":null}'), squeeze.flush()]
    return b"".join(parts)


def _peak(action: object) -> int:
    tracemalloc.start()
    try:
        action()  # type: ignore[operator]
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_transcript_inflating_past_the_bound_is_unreadable_not_held() -> None:
    bomb = _bomb(4 * MAX_TRANSCRIPT_BYTES // (1 << 20))
    assert len(bomb) < 8 << 20
    assert (
        _peak(lambda: decode_transcript(bomb)) < 3 * MAX_TRANSCRIPT_BYTES
    )  # (the inflated buffer grows by copies)
    assert decode_transcript(bomb) is None


def test_the_search_leaves_such_a_transcript_out(tmp_path: Path) -> None:
    stored = store_two_cells(tmp_path / "stored")
    bomb = _bomb(4 * MAX_TRANSCRIPT_BYTES // (1 << 20))
    db = edited(stored, tmp_path / "db", "CREATE TEMP TABLE x AS SELECT 1")
    import duckdb

    con = duckdb.connect(str(db))
    row = con.execute("SELECT cell_key, run_id FROM results_compacted LIMIT 1").fetchone()
    assert row is not None
    key, run_id = row
    con.execute("UPDATE results_compacted SET transcript = ? WHERE cell_key = ?", [bomb, key])
    con.close()
    store = Store.open(db, read_only=True)
    try:
        texts: dict[str, str | None] = {}
        peak = _peak(lambda: texts.update(transcript_texts(store, run_id)))
    finally:
        store.close()
    assert key not in texts
    assert len(texts) == 1
    assert peak < 3 * MAX_TRANSCRIPT_BYTES


def test_an_ordinary_transcript_still_reads() -> None:
    from harness.core import Message

    blob = encode_transcript([Message(role="user", content="hi")])
    doc = decode_transcript(blob)
    assert doc is not None
    assert doc["messages"][0]["content"] == "hi"
