"""Append-only Parquet shards: how a run stores its results and spans while it runs.

A run writes under ``<db folder>/runs/<run_id>/``: ``results-<writer>-<n>.parquet`` (rows of
:data:`~harness.store._rows.ARROW_SCHEMA`) and ``spans-<writer>-<n>.parquet`` (the columns of the
``spans`` table), where ``<writer>`` names the writing process (time, pid, random) so that
several processes may write one run. A shard is written to a hidden temporary name, synced and
renamed: a reader (the ``results`` and ``spans`` views) never sees half a file, and a process
killed at any moment leaves only whole shards. Rows are flushed when ``max_rows`` are waiting or
when the oldest has waited ``max_age_s`` (a background thread), so a finished cell is on disk
within about ``max_age_s + 0.1`` s. Spans are followed as a stream: the thread converts the lines
appended to the run's span file since the last look (whole lines only) into a shard, so they are
never all held in memory (:class:`~harness.store._follow.SpanFollower`).

``runs/_schema/`` holds two empty shards with the current columns, so the views always have one
file to read and every column, before any run wrote a shard.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from harness._files import open_regular, own_folder
from harness.errors import StoreError
from harness.store._arrow import empty_table
from harness.store._damage import index_cells
from harness.store._diskfull import DiskPatience, is_disk_full
from harness.store._follow import SpanFollower
from harness.store._rows import ARROW_SCHEMA, prepared_to_arrow
from harness.store._spans import SPAN_ARROW_SCHEMA

__all__ = [
    "SCHEMA_DIR",
    "ShardWriter",
    "is_regular",
    "run_dir",
    "run_folder",
    "runs_dir",
    "shard_files",
    "unfit_run_id",
    "write_schema_files",
]

log = logging.getLogger("harness.store")

SCHEMA_DIR = "_schema"


def runs_dir(db: Path) -> Path:
    """The folder of run shards beside the database file ``db``."""
    return db.parent / "runs"


def run_dir(db: Path, run_id: str) -> Path:
    return run_folder(runs_dir(db), run_id)


#: The longest name a folder may have (bytes, as Linux and macOS count it).
NAME_MAX = 255


def unfit_run_id(run_id: str) -> str | None:
    """Why ``run_id`` cannot name a folder of its own under the runs folder, or None. The
    harness makes ids of digits, letters and ``-``; a database edited by hand may hold any
    text, and ``runs / "/tmp/x"`` or ``runs / "../.."`` is a folder elsewhere, whose files the
    compaction deleted (round 14)."""
    try:
        size = len(run_id.encode("utf-8"))
    except UnicodeEncodeError:
        return "it is not valid UTF-8"
    if run_id in ("", ".", "..") or "/" in run_id or "\\" in run_id or "\0" in run_id:
        return "it is not a plain folder name (empty, '.', '..', or holding '/', '\\' or NUL)"
    if size > NAME_MAX:
        return f"it is {size:,} bytes long, more than a folder's name may be ({NAME_MAX})"
    if run_id[0] in "_.":  # `_schema` was compacted: its empty shards deleted, and the folder
        return "it names a folder the harness keeps for itself (a name starting '_' or '.')"
    return None


def run_folder(runs: Path, run_id: str) -> Path:
    """The folder of ``run_id``'s shards under ``runs``; a :class:`StoreError` naming the run
    when its id cannot name a folder there (:func:`unfit_run_id`)."""
    why = unfit_run_id(run_id)
    if why is not None:
        shown = run_id if len(run_id) <= 80 else f"{run_id[:80]}..."
        raise StoreError(
            f"run {shown!r} has no folder under {runs}: {why} (is the database edited by hand?)"
        )
    return runs / run_id


def shard_files(folder: Path, kind: str) -> list[Path]:
    """The whole shards of ``kind`` (``results`` or ``spans``) in a run folder, oldest first:
    regular files only (a directory, FIFO or symbolic link of that name is never a shard; see
    :mod:`harness.store._damage`)."""
    if not folder.is_dir():
        return []
    return sorted(f for f in folder.glob(f"{kind}-*.parquet") if is_regular(f))


def is_regular(path: Path) -> bool:
    """Whether ``path`` is a regular file itself (a symbolic link is not followed)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _write_atomic(table: pa.Table, dest: Path, *, fsync: bool) -> None:
    # A name of this writer's own: readers make the schema shards at once (round 15), and
    # two sharing one name moved each other's file away (FileNotFoundError; round 16 B)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        with os.fdopen(open_regular(tmp, os.O_WRONLY | os.O_CREAT, truncate=True), "wb") as f:
            pq.write_table(table, f)
            f.flush()
            if fsync:
                os.fsync(f.fileno())
        os.replace(tmp, dest)
    except BaseException:
        with contextlib.suppress(OSError):  # half a file (a full disk): give the space back
            tmp.unlink()
        raise


def write_schema_files(runs: Path) -> None:
    """Write the empty schema shards (again when the columns changed)."""
    folder = own_folder(runs / SCHEMA_DIR)
    for kind, schema in (("results", ARROW_SCHEMA), ("spans", SPAN_ARROW_SCHEMA)):
        dest = folder / f"{kind}-schema.parquet"
        # a regular file only: a FIFO of that name blocked every reader and writer for ever
        # in pq.read_schema (a link too is replaced, never followed; adversary round 18 B)
        with (
            contextlib.suppress(OSError, pa.ArrowException),
            os.fdopen(open_regular(dest, os.O_RDONLY), "rb") as f,
        ):
            # (an empty shard is a few KB; one of 5 GB whose footer said 4 GB was read whole)
            if os.fstat(f.fileno()).st_size <= 1 << 20 and pq.read_schema(f).equals(schema):
                continue
        _write_atomic(empty_table(schema), dest, fsync=False)


class ShardWriter:
    """Buffers result rows (already checked by :func:`~harness.store._rows.prepare_row`) and
    writes them as shards; follows span files. Thread-safe; the background thread starts with
    the first row or span file.

    A full disk (see :mod:`harness.store._diskfull`): the thread keeps the rows and tries again
    with back-off; :meth:`add` goes on queueing them, and raises
    :class:`~harness.errors.DiskFull` only once the disk has stayed full past ``disk``'s budget.
    :meth:`flush` and :meth:`close` wait for room (within the budget) before giving up."""

    def __init__(
        self,
        runs: Path,
        *,
        max_rows: int = 1000,
        max_age_s: float = 0.5,
        fsync: bool = True,
        disk: DiskPatience | None = None,
    ) -> None:
        self.runs = runs
        self.max_rows = max_rows
        self.max_age_s = max_age_s
        self.fsync = fsync
        self.disk = disk if disk is not None else DiskPatience()
        self.token = f"{time.strftime('%Y%m%d%H%M%S')}-{os.getpid()}-{secrets.token_hex(3)}"
        self.shards = 0
        self._seq = 0
        self._rows: list[dict[str, Any]] = []
        self._since = 0.0
        self._lock = threading.Lock()  # the buffer
        self._io = threading.RLock()  # one flush at a time
        self._wake = threading.Event()
        self._stop = False
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self.followers: dict[tuple[str, Path], SpanFollower] = {}

    # --- results -------------------------------------------------------------------------------

    def add(self, row: dict[str, Any]) -> None:
        """Queue one prepared row; it is on disk within ``max_age_s`` (+ the thread's tick)."""
        self._raise_error()
        with self._lock:
            if not self._rows:
                self._since = time.monotonic()
            self._rows.append(row)
            n = len(self._rows)
        self._ensure_thread()
        if n >= 4 * self.max_rows and not self.disk.full:  # the thread falls behind: write here
            self.flush()
        elif n >= self.max_rows:
            self._wake.set()

    def write_now(self, rows: list[dict[str, Any]] | pa.Table) -> int:
        """Write rows (or a table of :data:`ARROW_SCHEMA`) as shards before returning."""
        with self._io:
            self.flush()
            table = rows if isinstance(rows, pa.Table) else prepared_to_arrow(rows)
            self.disk.call(lambda: self._write_table(table), f"writing a shard under {self.runs}")
        return int(table.num_rows)

    def pending(self) -> int:
        with self._lock:
            return len(self._rows)

    def flush(self) -> int:
        """Write every queued row now (waiting for room on a full disk, within the budget);
        return how many were written."""
        with self._io:
            n = self.disk.call(self._flush_once, f"writing a shard under {self.runs}", writes=False)
        if n:  # only a write says the disk has room
            self.disk.ok()
        return n

    def _flush_once(self) -> int:
        """One try at writing the queued rows; on failure they stay queued."""
        with self._io:
            with self._lock:
                rows, self._rows = self._rows, []
            if not rows:
                return 0
            try:
                self._write_table(prepared_to_arrow(rows))
            except BaseException as exc:
                with self._lock:  # keep them for the next attempt
                    self._rows[:0] = rows
                self._error = exc
                raise
            self._error = None
            return len(rows)

    def _write_table(self, table: pa.Table) -> None:
        runs = table.column("run_id")
        ids = runs.unique()
        for run_id in ids:
            part = table if len(ids) == 1 else table.filter(pc.equal(runs, run_id))
            dest = self.shard_path("results", str(run_id))
            _write_atomic(part, dest, fsync=self.fsync)
            self.shards += 1
            with contextlib.suppress(OSError):  # only for naming lost cells; never fails a write
                index_cells(dest.parent, dest.name, map(str, part.column("cell_key").to_pylist()))

    def shard_path(self, kind: str, run_id: str) -> Path:
        """A new shard's name in ``run_id``'s folder (created)."""
        self._seq += 1
        folder = own_folder(run_folder(self.runs, run_id))
        return folder / f"{kind}-{self.token}-{self._seq:06d}.parquet"

    def _raise_error(self) -> None:
        error = self._error
        if error is None:
            return
        if is_disk_full(error):  # rows wait in memory until the disk has room, or the budget ends
            if self.disk.expired():
                raise self.disk.error(error, f"writing a shard under {self.runs}") from error
            return
        raise StoreError(f"cannot write a shard under {self.runs}: {error}")

    # --- spans ---------------------------------------------------------------------------------

    def follow(
        self, run_id: str, path: Path, *, scrub: Callable[[str], str] | None = None
    ) -> SpanFollower:
        """Follow span file ``path`` from its current end: its new lines become span shards."""
        key = (run_id, path.resolve())
        with self._io:
            follower = self.followers.get(key)
            if follower is None:
                follower = SpanFollower(
                    run_id,
                    path,
                    run_folder(self.runs, run_id),
                    lambda kind: self.shard_path(kind, run_id),
                    scrub=scrub,
                )
                self.followers[key] = follower
        self._ensure_thread()
        return follower

    def unfollow(self, run_id: str, path: Path) -> SpanFollower | None:
        """Convert what is left of a followed file and stop following it."""
        with self._io:
            follower = self.followers.pop((run_id, path.resolve()), None)
            if follower is not None:
                try:
                    if self.disk.call(
                        lambda: follower.poll(fsync=self.fsync),
                        f"writing spans under {self.runs}",
                        writes=False,
                    ):
                        self.disk.ok()
                finally:
                    follower.close()
            return follower

    # --- the background thread -----------------------------------------------------------------

    def _ensure_thread(self) -> None:
        if self._thread is None and not self._stop:
            self._thread = threading.Thread(target=self._loop, name="harness-shards", daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        tick = min(0.1, self.max_age_s / 4)
        while not self._stop:
            self._wake.wait(tick)
            self._wake.clear()
            try:
                self._tick()
            except Exception as exc:  # reported to the writer by the next add/flush/close
                if not self.disk.failed(exc, f"writing a shard under {self.runs}"):
                    log.warning("harness: shard flush failed (will retry): %s", exc)

    def _tick(self) -> None:
        if self.disk.full and not self.disk.due():  # a full disk: wait for the next try
            return
        now = time.monotonic()
        with self._lock:
            due = bool(self._rows) and (
                self.disk.full
                or len(self._rows) >= self.max_rows
                or now - self._since >= self.max_age_s
            )
        wrote = False
        if due:
            wrote = self._flush_once() > 0
        with self._io:
            for follower in list(self.followers.values()):
                if (now - follower.last_poll >= self.max_age_s or self.disk.full) and (
                    follower.pending()
                ):
                    wrote = follower.poll(fsync=self.fsync) > 0 or wrote
        if wrote:
            self.disk.ok()

    def close(self) -> None:
        """Write what is queued, convert what is left of followed span files, stop the thread."""
        self._stop = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        try:
            self.flush()
        finally:
            for run_id, path in list(self.followers):
                self.unfollow(run_id, path)
