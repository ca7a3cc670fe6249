"""The text search of ``harness view``: the cells of a run whose answer, grader explanation,
error, deliverable or transcript contains a piece of text (:func:`search_keys`), with the
transcripts decompressed once for many searches (:func:`transcript_texts`)."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping

from harness.store._browse import latest_cells_sql
from harness.store._queries import Source, _con
from harness.store._transcript import inflated

__all__ = ["MAX_KEPT_CHARS", "search_keys", "transcript_texts"]

#: The most searchable text :func:`transcript_texts` keeps for one run (the viewer keeps a few
#: runs' for the next searches): a run whose transcripts were edited to inflate to 128 MiB each
#: held 4.3 GB for 31 cells for the viewer's life, a larger run any machine's memory
#: (adversary round 21, part B). Ordinary runs keep about 1 KB a cell.
MAX_KEPT_CHARS = 256 << 20
#: One run's transcripts inflated at a time (each may be 128 MiB): concurrent searches of many
#: runs held them all at once.
_INFLATING = threading.Lock()


def _like(q: str) -> str:
    """An ILIKE pattern matching ``q`` anywhere, its own ``%``, ``_`` and ``\\`` taken
    literally."""
    return "%" + q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


#: The stored transcript's own keys (harness/store/_transcript.py), taken out of the text that
#: is searched: a search for "name" or "content" must not match every cell.
_TRANSCRIPT_KEYS = re.compile(
    r'"(?:v|messages|cut|role|content|tool_calls|tool_result|name|reasoning|turn|id|'
    r'arguments|tool_call_id|is_error|review)":'
)


def transcript_texts(con: Source, run_id: str, *, latest: bool = True) -> dict[str, str | None]:
    """Each cell's transcript as searchable lower-case text, by cell key: the decompressed JSON
    (not parsed: parsing costs ten times more) without its own keys, so what is left is what
    the conversation says (contents, reasoning, tool names, arguments, results), JSON-escaped.
    Cells without a transcript are left out. Past :data:`MAX_KEPT_CHARS` characters in all, a
    cell's text is not kept (None): :func:`search_keys` reads it again at each search."""
    with _INFLATING:
        rows = _con(con).execute(latest_cells_sql("cell_key, transcript", latest=latest), [run_id])
        out: dict[str, str | None] = {}
        kept = 0
        while batch := rows.fetchmany(256):
            for key, blob in batch:
                text = _searchable(blob)
                if text is not None:
                    kept += len(text)
                    out[str(key)] = text if kept <= MAX_KEPT_CHARS else None
    return out


def _searchable(blob: bytes | None) -> str | None:
    raw = inflated(blob) if blob else None  # bounded: a zlib bomb edited into the store
    return (
        None if raw is None else _TRANSCRIPT_KEYS.sub(" ", raw.decode("utf-8", "replace")).lower()
    )


def _found_again(
    con: Source, run_id: str, keys: set[str], needles: set[str], latest: bool
) -> set[str]:
    """Which of the cells ``keys`` (whose text :func:`transcript_texts` did not keep) have a
    transcript holding one of ``needles``, read one at a time."""
    found: set[str] = set()
    with _INFLATING:
        rows = _con(con).execute(latest_cells_sql("cell_key, transcript", latest=latest), [run_id])
        while batch := rows.fetchmany(256):
            for key, blob in batch:
                text = _searchable(blob) if str(key) in keys else None
                if text is not None and any(n in text for n in needles):
                    found.add(str(key))
    return found


def search_keys(
    con: Source,
    run_id: str,
    q: str,
    *,
    latest: bool = True,
    transcripts: Mapping[str, str | None] | None = None,
) -> tuple[str, ...]:
    """The keys of the cells of a run whose answer, grader explanation, error or deliverable
    contains ``q`` (case-insensitive, DuckDB ``ILIKE``), or whose transcript does (a message,
    a tool call's arguments, a tool result). Transcripts are zlib-compressed JSON in the store,
    which SQL cannot look into: they are decompressed here (``transcripts``, from
    :func:`transcript_texts`, lets a caller keep them between searches) and searched for ``q``
    as typed and JSON-escaped (a quote or a backslash in ``q``)."""
    q = q.strip()
    if not q:
        return ()
    text = (
        "coalesce(text, '') || chr(10) || coalesce(grader_explanation, '') || chr(10) || "
        "coalesce(error, '') || chr(10) || coalesce(CAST(deliverable AS VARCHAR), '')"
    )
    cells = latest_cells_sql(f"cell_key, ({text}) ILIKE ? ESCAPE '\\' AS hit", latest=latest)
    rows = _con(con).execute(f"SELECT cell_key, hit FROM ({cells})", [_like(q), run_id]).fetchall()
    if transcripts is None:
        transcripts = transcript_texts(con, run_id, latest=latest)
    needles = {q.lower(), json.dumps(q.lower(), ensure_ascii=False)[1:-1]}
    found = []
    for key, hit in rows:
        body = transcripts.get(str(key))
        if hit or (body is not None and any(n in body for n in needles)):
            found.append(str(key))
    again = {key for key, body in transcripts.items() if body is None} - set(found)
    if again:
        found += _found_again(con, run_id, again, needles, latest)
    return tuple(sorted(found))
