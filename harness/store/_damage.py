"""Damaged shards: found, moved aside (by writers), skipped (by readers), and the run told which
cells it lost.

A shard is written to a hidden name, synced and renamed, so harness never leaves half a shard;
a damaged one was damaged from outside (a disk, ``truncate``, a copy cut short). The views read
every ``runs/*/results-*.parquet``, so one unreadable file failed every query of every run. Now
each :meth:`Store.open <harness.store.Store.open>` checks the shards' Parquet footers (the
``PAR1`` magic, a footer length that fits, the footer parsed) and the schema the footer gives
(:func:`schema_problem`: a column of the wrong type, as a file rewritten as strings, would fail
every query and every new run; a file without the shard's key columns is not a shard), and
that each is a regular file (a directory, FIFO or symbolic link named like a shard is never
opened nor followed). A shard from a newer harness (columns this one does not know, the rest
as expected) is not damaged: it is read, and left as shards by compaction. A writer
(``harness run``, ``harness compact``) moves a damaged shard to ``runs/<run>/quarantine/``,
outside the views' pattern, with a warning naming the file; compaction does the same when
reading a shard fails.
A reader (``harness report``, the viewer, ``Store.open(read_only=True)``) moves nothing: it
skips the damaged shard (its connection's views list the other files) with a warning naming
the file, and the next writer quarantines it. ``harness compact --repair`` reads every shard
whole (:func:`scan` with ``full=True``), for damage inside a file.

The cells a quarantined results shard held come from ``runs/<run>/cells.jsonl``, where the shard
writer lists each shard's cells as it writes it; they are written to
``quarantine/quarantined.jsonl`` and into the run's ``bench_runs.error`` (by the next writer), so
the run says which cells it lost (a ``--resume`` runs them again).
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import stat
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pyarrow as pa

from harness._files import json_lines, open_regular, own_folder
from harness.errors import StoreError
from harness.store._rows import ARROW_SCHEMA
from harness.store._spans import SPAN_ARROW_SCHEMA
from harness.telemetry._escape import escape_controls

__all__ = [
    "CELLS_INDEX",
    "MAX_FOOTER_BYTES",
    "QUARANTINE",
    "Damaged",
    "index_cells",
    "quarantine",
    "record_damage",
    "scan",
    "schema_problem",
    "type_name",
]

log = logging.getLogger("harness.store")

QUARANTINE = "quarantine"
CELLS_INDEX = "cells.jsonl"
_LOG = "quarantined.jsonl"
_KINDS = ("results", "spans")
#: What a shard of each kind must hold: the columns, and those without which it is no shard.
_EXPECTED: dict[str, dict[str, pa.DataType]] = {
    kind: {f.name: f.type for f in schema}
    for kind, schema in (("results", ARROW_SCHEMA), ("spans", SPAN_ARROW_SCHEMA))
}
_KEYS: dict[str, tuple[str, ...]] = {
    "results": ("result_id", "run_id", "cell_key", "suite", "task_id", "mode", "provider",
                "epoch", "passed", "finished_at"),
    "spans": ("run_id", "trace_id", "span_id", "name", "start_time"),
}  # fmt: skip


@dataclass(slots=True)
class Damaged:
    """A damaged shard: where it was, where it is (None: left in place, by a reader), why, and
    the cells it held."""

    run_id: str
    file: Path
    moved_to: Path | None
    reason: str
    cells: list[str] = field(default_factory=list)

    def describe(self) -> str:
        """One line: the shard, what became of it and why, and the first cells it held (a
        shard listed with 100,000 cells printed a warning line of 789 KB; the quarantine's log
        and the run's error keep them all: adversary round 22, part B)."""
        more = len(self.cells) - _NAMED_CELLS
        named = ", ".join(self.cells[:_NAMED_CELLS]) + (f" and {more} more" if more > 0 else "")
        lost = f"; lost cells: {named}" if self.cells else ""
        done = "quarantined" if self.moved_to is not None else "skipped"
        return f"damaged shard {self.file.name} {done} ({self.reason}){lost}"


#: The cells a damaged shard's one-line description names at most.
_NAMED_CELLS = 50


def index_cells(folder: Path, shard: str, cells: Iterable[str]) -> None:
    """Note which cells the shard ``shard`` of a run holds (one JSON line, appended). A write
    cut short (a full disk) is cut back off the file: a torn line would spoil the next one."""
    line = json.dumps({"shard": shard, "cells": sorted(set(cells))}, ensure_ascii=True) + "\n"
    data = line.encode("ascii")
    fd = open_regular(folder / CELLS_INDEX, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        written = os.write(fd, data)  # one write: lines from several writers never mix
        if written < len(data):
            os.ftruncate(fd, os.lseek(fd, 0, os.SEEK_CUR) - written)
            raise OSError(errno.ENOSPC, f"wrote {written} of {len(data)} bytes", str(folder))
    finally:
        os.close(fd)


def _not_regular(path: Path) -> str | None:
    """What ``path`` is when it is not a regular file (never followed nor opened), or None."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISLNK(mode):
        return "a symbolic link, not a shard (never followed)"
    what = "a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else (
        "a socket" if stat.S_ISSOCK(mode) else "a device")  # fmt: skip
    return f"{what}, not a shard file"


def type_name(t: pa.DataType) -> str:
    """A column type as DuckDB names it (how the tables and the messages say it)."""
    if pa.types.is_dictionary(t):
        return type_name(t.value_type)
    if pa.types.is_timestamp(t):
        zone = " WITH TIME ZONE" if t.tz else ""
        return f"TIMESTAMP{'_NS' if t.unit == 'ns' and not zone else ''}{zone}"
    names = {
        pa.string(): "VARCHAR", pa.large_string(): "VARCHAR", pa.int64(): "BIGINT",
        pa.int32(): "INTEGER", pa.int16(): "SMALLINT", pa.int8(): "TINYINT",
        pa.float64(): "DOUBLE", pa.float32(): "FLOAT", pa.bool_(): "BOOLEAN",
        pa.binary(): "BLOB", pa.large_binary(): "BLOB", pa.null(): "NULL",
    }  # fmt: skip
    return names.get(t, str(t).upper())


def _is(kind: str, t: pa.DataType) -> bool:
    """``pa.types.is_<kind>(t)``, False where this pyarrow has no such test (the view types
    came with pyarrow 16; pyproject allows 15)."""
    test = getattr(pa.types, f"is_{kind}", None)
    return bool(test(t)) if test is not None else False


def _family(t: pa.DataType) -> str:
    if pa.types.is_dictionary(t):
        return _family(t.value_type)
    if pa.types.is_integer(t):
        return "integer"
    if pa.types.is_floating(t):
        return "float"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or _is("string_view", t):
        return "string"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or _is("binary_view", t):
        return "binary"
    if pa.types.is_timestamp(t):
        return "timestamp with zone" if t.tz else "timestamp"
    return str(t)


def _fits(found: pa.DataType, expected: pa.DataType) -> bool:
    """Whether a shard's column of type ``found`` reads as ``expected`` (all-NULL columns and
    integers for doubles do; a string for a number, or a zone on a timestamp, do not)."""
    have, want = _family(found), _family(expected)
    return pa.types.is_null(found) or have == want or (have, want) == ("integer", "float")


def schema_problem(kind: str, schema: pa.Schema) -> str | None:
    """Why a ``kind`` shard of ``schema`` cannot be read with the others (damaged or foreign),
    or None. Columns this harness does not know, the rest as expected, are a newer harness's:
    not a problem here (compaction leaves such runs as shards and says so)."""
    expected = _EXPECTED[kind]
    names = set(schema.names)
    missing = [c for c in _KEYS[kind] if c not in names]
    if missing and not names & expected.keys():
        shown = ", ".join(schema.names[:8]) + (", ..." if len(schema.names) > 8 else "")
        return f"not a harness {kind} shard (its columns: {shown})"
    if missing:
        return f"not a whole {kind} shard: it lacks the column(s) {', '.join(missing)}"
    wrong = [
        f"column {f.name} is {type_name(f.type)}, expected {type_name(want)}"
        for f in schema
        if (want := expected.get(f.name)) is not None and f.type != want and not _fits(f.type, want)
    ]
    if wrong:
        more = f" (and {len(wrong) - 3} more)" if len(wrong) > 3 else ""
        return "wrong column types: " + "; ".join(wrong[:3]) + more
    return None


def _footer_problem(path: Path) -> str | None:
    """Why the shard's Parquet footer is unusable, or its schema not a shard's, or None."""
    try:
        with path.open("rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < 12:
                return f"{size} bytes: too short for Parquet"
            f.seek(size - 8)
            tail = f.read(8)
    except FileNotFoundError:
        return None  # compacted meanwhile
    (length,) = struct.unpack("<I", tail[:4])
    if tail[4:] != b"PAR1":
        return f"{size} bytes: no Parquet footer (cut short?)"
    if length + 12 > size:
        return f"{size} bytes: the footer says {length} bytes"
    if length > MAX_FOOTER_BYTES:  # (read whole by pyarrow: 4 GB held by each reader for 34 s)
        return f"{size} bytes: the footer says {length} bytes (a shard's is a few KB)"
    import pyarrow.parquet as pq

    try:
        schema = pq.read_metadata(path).schema.to_arrow_schema()
    except FileNotFoundError:
        return None
    except Exception as exc:  # any reader failure means the footer is damaged
        return f"unreadable footer: {type(exc).__name__}: {exc}"
    kind = path.name.split("-", 1)[0]
    return schema_problem(kind, schema) if kind in _EXPECTED else None


def _full_problem(path: Path) -> str | None:
    """Why the shard cannot be read whole, or None."""
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
        for i in range(pf.num_row_groups):
            pf.read_row_group(i)
    except FileNotFoundError:
        return None
    except Exception as exc:  # any reader failure means the file is damaged
        return f"unreadable: {type(exc).__name__}: {exc}"
    return None


def _shards(runs: Path) -> Iterable[Path]:
    try:
        folders = [p for p in runs.iterdir() if p.is_dir() and not p.name.startswith("_")]
    except OSError:
        return
    for folder in folders:
        for kind in _KINDS:
            yield from sorted(folder.glob(f"{kind}-*.parquet"))


def _cells_of(folder: Path, shard: str) -> list[str]:
    """The cells ``cells.jsonl`` lists for ``shard``: read line by line, a regular file only (a
    FIFO there held ``harness compact`` for ever; a line nested 200,000 deep was a
    ``RecursionError`` traceback: adversary round 20, part B). The file is read once for the
    shards of a run quarantined together (read again for each, 5,000 damaged shards took 68 s,
    10,000 four times that: adversary round 22, part B) while it is small enough to keep."""
    path = folder / CELLS_INDEX
    try:
        st = os.stat(path)
    except OSError:
        return []
    key = (str(path), st.st_size, st.st_mtime_ns)
    if st.st_size > _KEPT_INDEX_BYTES:
        return sorted(_index(path, shard).get(shard, ()))
    global _LAST_INDEX
    last = _LAST_INDEX  # (one reference: threads swap it whole)
    if last is None or last[0] != key:
        last = _LAST_INDEX = (key, _index(path, None))
    return sorted(last[1].get(shard, ()))


def _index(path: Path, shard: str | None) -> dict[str, set[str]]:
    """The cells of each shard (of ``shard`` only, unless None) the index ``path`` lists."""
    cells: dict[str, set[str]] = {}
    for entry in json_lines(path):
        listed = entry.get("cells") if isinstance(entry, dict) else None
        name = entry.get("shard") if isinstance(entry, dict) else None
        if isinstance(listed, list) and isinstance(name, str) and shard in (None, name):
            cells.setdefault(name, set()).update(str(c) for c in listed)
    return cells


#: A run's cells index kept between quarantines (one run's at a time), when no larger.
_KEPT_INDEX_BYTES = 64 << 20
_LAST_INDEX: tuple[tuple[str, int, int], dict[str, set[str]]] | None = None


def quarantine(shard: Path, reason: str) -> Damaged | None:
    """Move ``shard`` to its run's quarantine folder (None when it is gone already)."""
    folder = shard.parent
    try:  # a real folder only: a link planted there had the shard and the log written into
        dest_dir = own_folder(folder / QUARANTINE)  # its target, a file or a FIFO there was a
    except OSError as exc:  # FileExistsError traceback (adversary round 21, part B)
        raise StoreError(f"cannot quarantine {shard} ({reason}): {exc.strerror}") from None
    dest = dest_dir / shard.name
    n = 1
    while os.path.lexists(dest):  # quarantined before (a directory would not be replaced)
        n += 1
        dest = dest_dir / f"{shard.name}.{n}"
    try:
        os.replace(shard, dest)  # a symbolic link is moved itself, never followed
    except FileNotFoundError:
        return None
    cells = _cells_of(folder, shard.name) if shard.name.startswith("results-") else []
    damaged = Damaged(folder.name, shard, dest, reason, cells)
    entry = {
        "shard": shard.name,
        "reason": reason,
        "cells": cells,
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    log_fd = open_regular(dest_dir / _LOG, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    with os.fdopen(log_fd, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")
    said = f"harness: run {damaged.run_id}: {damaged.describe()}; moved to {dest}"
    log.warning("%s", escape_controls(said))  # one line: a folder named with a line break
    return damaged


#: The largest Parquet footer a shard may have (a shard's is a few KB): a sparse file whose
#: footer said 4 GB had every reader read it whole, 4.4 GB and 34 s (adversary round 21, B).
MAX_FOOTER_BYTES = 64 << 20

#: Damaged shards a reader of this process has warned about (once per file and reason).
_WARNED: set[tuple[str, str]] = set()


def scan(
    runs: Path,
    *,
    full: bool = False,
    files: Sequence[Path] | None = None,
    move: bool = True,
) -> list[Damaged]:
    """Check the shards under ``runs`` (or just ``files``): footers only, or (``full``) every
    row group; return the damaged ones, moved to quarantine (``move``: a writer) or left in
    place with a warning (a reader)."""
    found: list[Damaged] = []
    for shard in _shards(runs) if files is None else files:
        why = _not_regular(shard) or _footer_problem(shard)
        if why is None and full:
            why = _full_problem(shard)
        if why is None:
            continue
        damaged = quarantine(shard, why) if move else _skipped(shard, why)
        if damaged is not None:
            found.append(damaged)
    return found


def _skipped(shard: Path, reason: str) -> Damaged:
    folder = shard.parent
    cells = _cells_of(folder, shard.name) if shard.name.startswith("results-") else []
    damaged = Damaged(folder.name, shard, None, reason, cells)
    if (str(shard), reason) not in _WARNED:
        _WARNED.add((str(shard), reason))
        log.warning("%s", escape_controls(  # one line: a folder named `R\nharness gate: PASSED`
            f"harness: run {damaged.run_id}: {damaged.describe()}; left in place (the next "
            f"`harness run` or `harness compact` moves it to {folder / QUARANTINE}/)"
        ))  # fmt: skip
    return damaged


def record_damage(con: duckdb.DuckDBPyConnection, runs: Path) -> None:
    """Write what the quarantine logs say into ``bench_runs.error`` of their runs (once per
    shard: a shard already named there is skipped), one update per run: an update per line,
    each searching the run's growing error, took 116 s at the first writer and 35 s at every
    later one for a log of 20,000 lines (adversary round 22, part B)."""
    for log_file in runs.glob(f"*/{QUARANTINE}/{_LOG}"):
        run_id = log_file.parent.parent.name
        row = con.execute("SELECT error FROM bench_runs WHERE run_id = ?", [run_id]).fetchone()
        if row is None:
            continue
        error = row[0] or ""
        named = set(_NAMED.findall(error))  # the notes written before (names without spaces)
        notes: list[str] = []
        for entry in json_lines(log_file):  # (a FIFO, a deep line, a line not an object:
            if not isinstance(entry, dict):  # adversary round 20, part B)
                continue
            shard = str(entry.get("shard"))
            if shard in named or (_SPACE.search(shard) and shard in error):
                continue
            named.add(shard)
            cells = [str(c) for c in entry.get("cells") or [] if isinstance(c, str)]
            lost = f"; lost cells: {', '.join(cells)}" if cells else ""
            notes.append(f"damaged shard {shard} quarantined ({entry.get('reason')}){lost}")
        if notes:
            con.execute(
                "UPDATE bench_runs SET error = ? WHERE run_id = ?",
                ["; ".join([error, *notes] if error else notes), run_id],
            )


#: A shard named in a run's error by :func:`record_damage` (or by :meth:`Damaged.describe`).
_NAMED = re.compile(r"damaged shard (\S+) quarantined")
_SPACE = re.compile(r"\s")
