"""The cell page of a store edited by hand is bounded (issue 34; round 21 part B's
found-not-fixed, fixed by the lead in stop 47). The writer keeps a message's text to 20,000
characters and a conversation to 400 messages; a transcript edited in by hand with one 10 MiB
message made a 10 MB page (128 MiB: 134 MB). Now the page shows each message's texts to twice
the writer's bound and the messages to the writer's count, saying what it left out."""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import duckdb
import pytest

from harness.store import Store
from harness.store._browse import cell_detail
from harness.store._transcript import MAX_CONTENT_CHARS, MAX_MESSAGES
from tests.e2e.edited_store import edited, store_two_cells

BIG = 10 << 20


def _edited(tmp_path: Path, doc: object) -> tuple[Path, str, str]:
    db = edited(store_two_cells(tmp_path / "stored"), tmp_path / "db", "SELECT 1")
    con = duckdb.connect(str(db))
    row = con.execute("SELECT cell_key, run_id FROM results_compacted LIMIT 1").fetchone()
    assert row is not None
    key, run_id = row
    blob = zlib.compress(json.dumps(doc).encode(), 1)
    con.execute("UPDATE results_compacted SET transcript = ? WHERE cell_key = ?", [blob, key])
    con.close()
    return db, run_id, key


def _shown(db: Path, run_id: str, key: str) -> dict[str, Any]:
    store = Store.open(db, read_only=True)
    try:
        cell = cell_detail(store, run_id, key)
    finally:
        store.close()
    assert cell is not None
    shown: dict[str, Any] = cell["transcript"]
    return shown


def test_a_huge_message_is_cut_for_the_page(tmp_path: Path) -> None:
    doc = {"v": 1, "cut": None, "messages": [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "a" * BIG, "reasoning": "r" * BIG,
         "tool_calls": [{"id": "c", "name": "f", "arguments": {"x": "y" * BIG}}]},
        {"role": "tool", "content": "t",
         "tool_result": {"tool_call_id": "c", "content": "z" * BIG}},
    ]}  # fmt: skip
    shown = _shown(*_edited(tmp_path, doc))
    assert len(json.dumps(shown)) < 8 * MAX_CONTENT_CHARS  # 40 MB before
    assert shown["messages"][0] == {"role": "user", "content": "q"}
    assert "characters not shown" in shown["messages"][1]["content"]
    assert "message 1 (content)" in shown["cut"]


def test_too_many_messages_are_cut_for_the_page(tmp_path: Path) -> None:
    many = [{"role": "user", "content": f"m{n}"} for n in range(20_000)]
    shown = _shown(*_edited(tmp_path, {"v": 1, "cut": None, "messages": many}))
    assert len(shown["messages"]) == MAX_MESSAGES
    assert shown["messages"][-1]["content"] == "m19999"
    assert "19600 messages not shown" in shown["cut"]


@pytest.mark.parametrize("odd", [["a", 1, None], [{"k" + str(n): n for n in range(100_000)}]])
def test_messages_the_writer_never_makes_are_shown_as_text(tmp_path: Path, odd: list[Any]) -> None:
    shown = _shown(*_edited(tmp_path, {"v": 1, "cut": None, "messages": odd}))
    assert all(set(m) == {"role", "content"} for m in shown["messages"])
    assert len(json.dumps(shown)) < 4 * MAX_CONTENT_CHARS
