"""The text search of ``harness view``: the cells of a run whose answer, grader explanation,
error, deliverable or transcript contains a piece of text (:func:`search_keys`), with the
transcripts decompressed once for many searches (:func:`transcript_texts`)."""

from __future__ import annotations

import json
import re

from harness.store._browse import latest_cells_sql
from harness.store._queries import Source, _con
from harness.store._transcript import inflated

__all__ = ["search_keys", "transcript_texts"]


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


def transcript_texts(con: Source, run_id: str, *, latest: bool = True) -> dict[str, str]:
    """Each cell's transcript as searchable lower-case text, by cell key: the decompressed JSON
    (not parsed: parsing costs ten times more) without its own keys, so what is left is what
    the conversation says (contents, reasoning, tool names, arguments, results), JSON-escaped.
    Cells without a transcript are left out."""
    rows = (
        _con(con)
        .execute(latest_cells_sql("cell_key, transcript", latest=latest), [run_id])
        .fetchall()
    )
    out: dict[str, str] = {}
    strip = _TRANSCRIPT_KEYS.sub
    for key, blob in rows:
        raw = inflated(blob) if blob else None  # bounded: a zlib bomb edited into the store
        if raw is not None:
            out[str(key)] = strip(" ", raw.decode("utf-8", "replace")).lower()
    return out


def search_keys(
    con: Source,
    run_id: str,
    q: str,
    *,
    latest: bool = True,
    transcripts: dict[str, str] | None = None,
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
    return tuple(sorted(found))
