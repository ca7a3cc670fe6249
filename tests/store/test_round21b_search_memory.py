"""A fault found by adversary round 21, part B (issue 34): round 20 bounded each stored
transcript's inflation (128 MiB), not a run's. The viewer's text search keeps every transcript
of a run inflated for the next search (and its start-up prepares the newest three runs'): a
store whose 31 transcripts were edited to inflate to 128 MiB each (4 MB on disk) held the
viewer at 4.3 GB for its life; a run of 1,000 such cells, 130 MB on disk, would hold 128 GB.
Now at most ``MAX_KEPT_CHARS`` of a run's text is kept; the rest is read again, one transcript
at a time, at each search, and still found. The first test fails on 84cec7a."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from harness.store import Store, _search
from harness.store._search import search_keys, transcript_texts
from tests.e2e.edited_store import edited, store_two_cells


def _blob(text: str) -> bytes:
    import zlib

    return zlib.compress(('{"v":1,"messages":[{"role":"user","content":"' + text + '"}]}').encode())


def _two_long_transcripts(tmp_path: Path) -> tuple[Path, str, list[str]]:
    stored = store_two_cells(tmp_path / "stored")
    db = edited(stored, tmp_path / "db", "CREATE TEMP TABLE x AS SELECT 1")
    con = duckdb.connect(str(db))
    rows = con.execute(
        "SELECT cell_key, run_id FROM results_compacted ORDER BY cell_key"
    ).fetchall()
    for n, (key, _) in enumerate(rows):
        text = ("x" * 5000) + f"needle{n}"
        con.execute("UPDATE results_compacted SET transcript = ? WHERE cell_key = ?",
                    [_blob(text), key])  # fmt: skip
    con.close()
    return db, str(rows[0][1]), [str(r[0]) for r in rows]


def test_the_text_a_run_keeps_for_search_is_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, run_id, _ = _two_long_transcripts(tmp_path)
    monkeypatch.setattr(_search, "MAX_KEPT_CHARS", 6000, raising=False)
    with Store.open(db, read_only=True) as store:
        texts = transcript_texts(store, run_id)
    assert len(texts) == 2
    assert sum(len(t or "") for t in texts.values()) <= 6000


def test_a_transcript_not_kept_is_still_searched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, run_id, keys = _two_long_transcripts(tmp_path)
    monkeypatch.setattr(_search, "MAX_KEPT_CHARS", 6000, raising=False)
    with Store.open(db, read_only=True) as store:
        texts = transcript_texts(store, run_id)
        assert search_keys(store, run_id, "NEEDLE1", transcripts=texts) == (keys[1],)
        assert search_keys(store, run_id, "needle0", transcripts=texts) == (keys[0],)
        assert search_keys(store, run_id, "needle", transcripts=texts) == tuple(keys)
        assert search_keys(store, run_id, "no such text", transcripts=texts) == ()
