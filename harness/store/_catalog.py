"""The catalog's moments: opening the DuckDB file (waiting for another process's hold), creating
or upgrading it, closing the runs of dead processes, and the ``finish.json`` a run leaves when the
file is busy at its end.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import secrets
import socket
import stat
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb

from harness._files import file_kind, json_of, own_folder, write_atomic
from harness._oneline import one_line
from harness.errors import StoreError
from harness.store import _locking as locking
from harness.store import _schema as schema
from harness.store._alive import alive, remove_unheld
from harness.store._damage import record_damage
from harness.store._diskfull import make_reserve
from harness.store._shards import write_schema_files
from harness.store._views import (
    VIEWS,
    changed_views,
    create_views,
    drop_views,
    runs_literal,
    shadowing_functions,
    skip_shards,
)

__all__ = [
    "STORAGE_COMPATIBILITY",
    "TABLES",
    "connect",
    "connect_current",
    "create_in_place",
    "create_or_upgrade",
    "merge",
    "missing_relations",
    "read_finish",
    "recover_stale_runs",
    "write_finish",
]

log = logging.getLogger("harness.store")

#: The storage format a new file is written in: DuckDB 2's own format cannot be read by 1.x, and
#: the DuckDB CLI on PyPI (duckdb-cli) is 1.5; this one is readable by DuckDB >= 1.4.
STORAGE_COMPATIBILITY = "v1.4.0"


def create_in_place(
    path: Path, prepare: Callable[[duckdb.DuckDBPyConnection], None], wait_s: float
) -> bool:
    """Build a new database file under a temporary name (``prepare`` fills it) and link it into
    place at ``path``, so that a reader never meets a file that is still being created, and
    locked, there. False when another writer created ``path`` first (then open it as any
    existing file)."""
    tmp = path.with_name(f".{path.name}.new-{os.getpid()}-{secrets.token_hex(3)}")
    try:
        con = connect(tmp, False, wait_s)
        try:
            prepare(con)
            # Into the file now, so that a full disk fails here: a checkpoint failing silently
            # at close left the tables only in the write-ahead log, removed below (a fresh
            # --db on a nearly full disk then had no tables: CatalogException, exit 1).
            con.execute("CHECKPOINT")
        finally:
            con.close()
        if tmp.with_name(tmp.name + ".wal").exists():
            raise OSError(errno.ENOSPC, f"{tmp}: the new database was not written whole")
        try:
            os.link(tmp, path)  # never replaces a file another writer created first
        except FileExistsError:
            return False
        except OSError:  # a file system without hard links
            if path.exists():
                return False
            os.replace(tmp, path)
        return True
    finally:
        for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
            leftover.unlink(missing_ok=True)


def create_or_upgrade(
    path: Path, runs: Path, steps: Sequence[schema.Migration], wait_s: float, live: set[str]
) -> None:
    """Create the catalog at ``path`` (in place, see :func:`create_in_place`) or upgrade the one
    there through ``steps``; write the views over ``runs`` and the disk reserve, and close the
    runs of dead processes (all but ``live``, the runs of this process's writers)."""
    _openable(path)

    def prepare(con: duckdb.DuckDBPyConnection) -> None:
        _prepare(con, path, runs, steps, live)

    if path.exists() or not create_in_place(path, prepare, wait_s):
        con = connect(path, False, wait_s)
        try:
            prepare(con)
        finally:
            con.close()


def _prepare(
    con: duckdb.DuckDBPyConnection,
    path: Path,
    runs: Path,
    steps: Sequence[schema.Migration],
    live: set[str],
) -> None:
    runs_literal(runs)  # a folder DuckDB would read as a pattern: said before anything is made
    try:
        found = schema.schema_version(con)
        schema.check_version(found, len(steps), str(path))
        _refuse_shadowing(con, path)
        if found != len(steps):
            drop_views(con)
        before, after = schema.migrate(con, steps, where=str(path))
        write_schema_files(runs)
        create_views(con, runs)
    except duckdb.Error as exc:
        text = one_line(exc)
        lacking = [t for t in TABLES if t in missing_relations(con)]
        if lacking:
            text = f"its table {lacking[0]} is missing (dropped by hand, or the file is damaged)"
        raise StoreError(f"cannot create or upgrade the schema of {path}: {text}") from exc
    except OSError as exc:
        said = exc.strerror if exc.strerror and exc.filename is None else exc
        raise StoreError(f"cannot create {runs}: {said}") from exc
    make_reserve(runs)
    if before and before != after:
        log.info("harness: upgraded %s from schema v%d to v%d", path, before, after)
    recover_stale_runs(con, runs, live)


def connect_current(
    path: Path,
    runs: Path,
    steps: Sequence[schema.Migration],
    wait_s: float,
    skip: Sequence[Path] = (),
) -> duckdb.DuckDBPyConnection | None:
    """A read-only connection to ``path`` if its schema is the latest of ``steps``; None for an
    older file or one missing a table or view (a writer makes them). A newer file raises
    :class:`~harness.errors.SchemaTooNew`. Views the file holds otherwise than the harness
    writes them over ``runs`` (edited by hand, or the file moved) are read through the
    harness's own, made for this connection alone; the file is not written."""
    _openable(path)
    if not path.exists():
        raise StoreError(f"no results database at {path}: `harness run` creates it")
    con = connect(path, True, wait_s)
    try:
        try:
            found = schema.schema_version(con)
            schema.check_version(found, len(steps), str(path))
            current = found == len(steps) and not missing_relations(con) and _schema_made(runs)
        except duckdb.Error as exc:  # schema_version edited by hand: a traceback before
            text = one_line(exc)
            raise StoreError(
                f"cannot read the schema version of {path}: {text} (is the file edited by "
                "hand or damaged?)"
            ) from exc
        if current:
            if _stat_key(path) not in _CLEAN:  # about 15 ms: once per state of the file
                _refuse_shadowing(con, path)
                _CLEAN.add(_stat_key(path))
            _own_views_if_changed(con, path, runs, skip)
    except BaseException:
        con.close()
        raise
    if current:
        return con
    con.close()  # older, a table or view dropped by hand, or no empty shards (the views' globs
    return None  # match nothing: "No files found"): a writer makes them again


def _schema_made(runs: Path) -> bool:
    """Whether the empty shards every view's glob matches are there, made now if not (a file
    moved without its runs folder, or the folder deleted by hand, lacks them): files only, no
    need of the database's lock (a reader that asked a writer waited on another reader's hold
    and was told the file was in use), and made again when they do not read as the schema (a
    damaged one failed every reader, ``No magic bytes found``: adversary round 19, part B).
    False when they cannot be made: a writer says why."""
    try:
        write_schema_files(runs)
    except OSError:
        return False
    return True


#: The states (:func:`_stat_key`) of files found to define no function under a DuckDB name.
_CLEAN: set[tuple[object, ...]] = set()


def _stat_key(path: Path) -> tuple[object, ...]:
    """The state of a database file and its write-ahead log, as far as ``stat`` shows it: its
    change time too, which no one sets (a macro written in place, the size and modification
    time put back with ``touch -r``, was not checked again by this process; round 19 B)."""
    key: list[object] = [str(path)]
    for file in (path, path.with_name(path.name + ".wal")):
        try:
            st = file.stat()
        except OSError:
            key.append(None)
        else:
            key.append((st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return tuple(key)


def _refuse_shadowing(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    shadowing = shadowing_functions(con)
    if shadowing:
        raise StoreError(
            f"{path} defines {', '.join(shadowing)} under the name of DuckDB's own function: "
            "the harness's views and reports would call it, and read wrong or fail; drop it "
            f"(`DROP MACRO {shadowing[0]}`) and run again"
        )


#: The files and views :func:`_own_views_if_changed` has warned of in this process.
_WARNED: set[tuple[str, tuple[str, ...]]] = set()


def _own_views_if_changed(
    con: duckdb.DuckDBPyConnection, path: Path, runs: Path, skip: Sequence[Path]
) -> None:
    """The harness's own views for this connection when the file's are not (``skip``: the
    damaged shards a reader leaves out; a file moved with a damaged shard in its runs folder
    failed every reader, ``No magic bytes found``: adversary round 19, part B)."""
    try:
        changed = changed_views(con, runs)
        edited = changed_views(con, runs, anywhere=True) if changed else []
        if changed and skip:
            skip_shards(con, runs, skip)
        elif changed:
            create_views(con, runs, temp=True)
    except duckdb.Error as exc:
        text = one_line(exc)
        raise StoreError(f"cannot read the views of {path}: {text}") from exc
    if edited and (str(path), tuple(edited)) not in _WARNED:
        _WARNED.add((str(path), tuple(edited)))  # once per process (the viewer opens per page)
        log.warning(
            "harness: the views %s of %s are not the harness's (edited by hand?): reading "
            "through the harness's own; the next `harness run` or `harness compact` writes "
            "them again",
            ", ".join(edited), path,
        )  # fmt: skip
    elif changed:  # a file moved (or copied) with its runs folder: its views read the old one
        log.debug("harness: %s was moved; reading its shards in %s", path, runs)


#: The tables of the current schema (the views are :data:`~._views.VIEWS`).
TABLES = ("bench_runs", "compacted_shards", "results_compacted", "spans_compacted")


def missing_relations(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The tables and views of the current schema that the file lacks (dropped by hand: every
    read of them was a DuckDB traceback, exit 1, in ``report``, ``gate`` and the viewer)."""
    there = {
        str(r[0]).lower()  # DuckDB's names ignore case
        for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
        ).fetchall()
    }
    return [name for name in (*TABLES, *VIEWS) if name not in there]


def _openable(path: Path) -> None:
    if "\\" in str(path):  # DuckDB opened `a\b/h.duckdb` as `a/b/h.duckdb`
        raise StoreError(
            f"{path}: DuckDB reads '\\' in a path as '/'; keep the database in a folder without it"
        )


def connect(path: Path, read_only: bool, wait_s: float) -> duckdb.DuckDBPyConnection:
    """Open the file; another process's lock is waited for up to ``wait_s``. The file (links
    followed) and its write-ahead log (``PATH.wal``, never a link) must be regular files or
    absent: DuckDB blocks for ever opening a FIFO, and writes through a link at the log."""
    _check_files(path)
    config: dict[str, str | bool | int | float | list[str]] = dict(schema.NO_DOWNLOADS)
    if not read_only:
        config["storage_compatibility_version"] = STORAGE_COMPATIBILITY
    deadline = time.monotonic() + wait_s
    pause = 0.02
    while True:
        try:
            con = duckdb.connect(str(path), read_only=read_only, config=config)
            break
        except duckdb.IOException as exc:
            if "lock" not in str(exc).lower():
                raise StoreError(f"cannot open {path}: {one_line(exc)}") from exc
            if time.monotonic() >= deadline:
                raise locking.locked_error(path, exc) from exc
            time.sleep(pause)
            pause = min(pause * 2, 0.25)
        except duckdb.ConnectionException as exc:  # this process has it open otherwise
            raise locking.locked_error(path, exc) from exc
        except duckdb.Error as exc:
            raise StoreError(f"cannot open {path}: {one_line(exc)}") from exc
    con.execute("SET TimeZone = 'UTC'")
    return con


def _check_files(path: Path) -> None:
    """A :class:`StoreError` when ``path`` or its write-ahead log is there but is not a regular
    file (round 7: a FIFO at ``h.duckdb.wal`` hung ``harness run`` until killed)."""
    wal = Path(f"{path}.wal")
    for name, look in ((path, os.stat), (wal, os.lstat)):
        try:
            mode = look(name).st_mode
        except OSError:  # absent (DuckDB makes it), or a dangling link: DuckDB says so
            continue
        if not stat.S_ISREG(mode):
            raise StoreError(
                f"cannot open {path}: {name} is {file_kind(mode)}, not a regular file; "
                "refused (remove it)"
            )


def recover_stale_runs(con: duckdb.DuckDBPyConnection, runs: Path, live: set[str]) -> None:
    """Close runs still ``running`` whose process is gone (this host only: another host's
    process cannot be checked): with the status their ``finish.json`` recorded when the
    file was busy at their end, else ``interrupted``, finished at their last result. Shards
    moved to quarantine are recorded in their runs' ``error`` (see :mod:`._damage`)."""
    record_damage(con, runs)
    host, me = socket.gethostname(), os.getpid()
    rows = con.execute(
        "SELECT run_id, pid FROM bench_runs WHERE status = 'running' AND host = ?", [host]
    ).fetchall()
    for run_id, pid in rows:
        if run_id in live:
            continue
        held = alive(runs, run_id)  # a pid may be another process's now (round 21 B)
        if held:
            continue
        if held is None and pid != me and pid is not None and locking.pid_alive(pid):
            continue
        _close_dead(con, runs, run_id)
        if held is False:
            remove_unheld(runs, run_id)  # closed: its lock file is not needed any more


def _close_dead(con: duckdb.DuckDBPyConnection, runs: Path, run_id: str) -> None:
    finish = read_finish(runs / run_id)
    if finish is not None:
        con.execute(
            "UPDATE bench_runs SET status = ?, finished_at = ?, error = ? WHERE run_id = ?",
            [finish["status"], finish["finished_at"], finish.get("error"), run_id],
        )
        return
    con.execute(
        """
            UPDATE bench_runs b SET status = 'interrupted',
                finished_at = coalesce(
                    (SELECT max(r.finished_at) FROM results r WHERE r.run_id = b.run_id),
                    b.started_at),
                error = coalesce(b.error, 'the process ' || coalesce(b.pid::VARCHAR, '?')
                                 || ' stopped without closing the run')
            WHERE run_id = ?""",
        [run_id],
    )


def merge(old: Sequence[str] | None, new: Sequence[str]) -> list[str]:
    out = list(old or ())
    out.extend(x for x in new if x not in out)
    return out


def write_finish(folder: Path, status: str, when: datetime, error: str | None) -> None:
    own_folder(folder)
    doc = {"status": status, "finished_at": when.isoformat(), "error": error}
    write_atomic(folder / "finish.json", json.dumps(doc))


def read_finish(folder: Path) -> dict[str, Any] | None:
    data: Any = json_of(folder / "finish.json")  # (a FIFO there held every writer for ever)
    try:
        if data.get("status") in ("finished", "interrupted", "failed"):
            data["finished_at"] = datetime.fromisoformat(str(data["finished_at"]))
            return dict(data)
    except (OSError, ValueError, TypeError, AttributeError):
        pass
    return None


def reopen_run(
    con: duckdb.DuckDBPyConnection,
    label: str,
    suites: Sequence[str],
    modes: Sequence[str],
    providers: Sequence[str],
    epochs: int | None,
) -> str | None:
    """Reopen the latest run of ``label`` for ``--resume`` (status back to ``running``, its
    matrix extended); its id, or None when the label has no run."""
    row = con.execute(
        "SELECT run_id, suites, modes, providers FROM bench_runs WHERE label = ? "
        "ORDER BY started_at DESC, run_id DESC LIMIT 1",
        [label],
    ).fetchone()
    if row is None:
        return None
    merged = [merge(old, new) for old, new in zip(row[1:], (suites, modes, providers), strict=True)]
    con.execute(
        "UPDATE bench_runs SET status = 'running', finished_at = NULL, "
        "error = NULL, resumed = resumed + 1, pid = ?, host = ?, suites = ?, "
        "modes = ?, providers = ?, epochs = greatest(epochs, ?) WHERE run_id = ?",
        [os.getpid(), socket.gethostname(), *merged, epochs, row[0]],
    )
    return str(row[0])
