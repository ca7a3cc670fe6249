"""The runs of one :class:`~harness.store._writer.Store`: opening a run (one process per label,
see :mod:`harness.store._labels`), checking that results name a known run, deleting a run that
stored nothing, and closing one (also when the disk is full, see :mod:`harness.store._diskfull`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shutil
import socket
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Literal

import duckdb

from harness._version import __version__
from harness.errors import DiskFull, StoreError, StoreLocked, UnknownRun
from harness.store._access import CatalogAccess
from harness.store._alive import AliveLock
from harness.store._catalog import reopen_run, write_finish
from harness.store._diskfull import spend_reserve
from harness.store._labels import LabelLock
from harness.store._rows import json_text
from harness.store._shards import ShardWriter, run_dir, runs_dir

__all__ = ["RunLifecycle", "RunStatus"]

log = logging.getLogger("harness.store")

RunStatus = Literal["finished", "interrupted", "failed"]


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


class RunLifecycle:
    """The runs a store opened and has not finished, the runs it knows exist, and the label
    locks it holds. The store's ``begin_run``, ``finish_run`` and ``discard_run`` are these."""

    def __init__(self, access: CatalogAccess, shards: ShardWriter | None) -> None:
        self._access = access
        self._shards = shards
        self.path = access.path
        self.runs = runs_dir(access.path)
        self.disk = access.disk
        #: The runs begun here and not finished (the ones ``close`` finishes).
        self.open: set[str] = set()
        self._known: set[str] = set()
        self._labels: dict[str, LabelLock] = {}  # the labels this store runs
        self._run_labels: dict[str, str] = {}  # open run -> its label
        self._alive: dict[str, AliveLock | None] = {}  # open run -> its liveness lock

    def _flush(self) -> None:
        if self._shards is not None:
            self._shards.flush()

    def begin(
        self,
        *,
        label: str | None = None,
        suites: Sequence[str] = (),
        modes: Sequence[str] = (),
        providers: Sequence[str] = (),
        epochs: int | None = None,
        config: Mapping[str, Any] | None = None,
        git_sha: str | None = None,
        harness_version: str | None = None,
        run_id: str | None = None,
        resume: bool = False,
    ) -> str:
        """Open a run, or with ``resume`` reopen the label's latest (``Store.begin_run``)."""
        self._access.check_writable()
        if run_id is not None:
            run_dir(self.path, run_id)  # an id that names no folder of its own is refused
        lock = self._lock_label(label)

        def insert(con: duckdb.DuckDBPyConnection) -> str:
            now = _now()
            if resume and label is not None:
                found = reopen_run(con, label, suites, modes, providers, epochs)
                if found is not None:
                    run_dir(self.path, found)  # (a database edited by hand: refused)
                    return found
            new_id = run_id or f"{now:%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"
            try:
                con.execute(
                    "INSERT INTO bench_runs (run_id, started_at, status, label, git_sha, "
                    "harness_version, suites, modes, providers, epochs, config, pid, host) "
                    "VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        new_id, now, label, git_sha, harness_version or __version__,
                        list(suites), list(modes), list(providers), epochs, json_text(config),
                        os.getpid(), socket.gethostname(),
                    ],
                )  # fmt: skip
            except duckdb.ConstraintException as exc:
                raise StoreError(f"run {new_id!r} already exists in {self.path}") from exc
            return new_id

        try:
            opened = self._access.run("opening a run", insert)
        except BaseException:
            if lock is not None and label not in self._run_labels.values():
                self._labels.pop(str(label), None)
                lock.release()
            raise
        if lock is not None and label is not None:
            self._run_labels[opened] = label
            lock.note_run(opened)
        return self._opened(opened)

    def _lock_label(self, label: str | None) -> LabelLock | None:
        """The lock of ``label``, taken now unless this store holds it (None: no label)."""
        if label is None:
            return None
        lock = self._labels.get(label)
        if lock is None:
            lock = self._labels[label] = self.disk.call(
                lambda: LabelLock.acquire(self.runs, label), f"locking label {label!r}"
            )
        return lock

    def _release_label(self, run_id: str) -> None:
        """Drop the label lock of ``run_id`` when no other open run of this store has it."""
        label = self._run_labels.pop(run_id, None)
        if label is None or label in self._run_labels.values():
            return
        lock = self._labels.pop(label, None)
        if lock is not None:
            lock.release()

    def _opened(self, run_id: str) -> str:
        self.open.add(run_id)
        self._known.add(run_id)
        if run_id not in self._alive:  # held until the run ends (harness.store._alive)
            self._alive[run_id] = AliveLock.hold(self.runs, run_id)
        with contextlib.suppress(OSError):
            (run_dir(self.path, run_id) / "finish.json").unlink()
        return run_id

    def discard(self, run_id: str) -> bool:
        """Delete a run that stored nothing; whether it was (``Store.discard_run``)."""

        def delete(con: duckdb.DuckDBPyConnection) -> bool:
            got = con.execute(
                "DELETE FROM bench_runs WHERE run_id = ? AND NOT EXISTS "
                "(SELECT 1 FROM results WHERE run_id = ?)",
                [run_id, run_id],
            ).fetchone()
            return bool(got and got[0])

        try:
            self._flush()
            deleted = bool(self._access.run("deleting a run", delete))
        except DiskFull as exc:
            log.warning("harness: run %s not deleted: %s", run_id, exc)
            return False
        if deleted:
            self._ended(run_id, closed=True)
            self._known.discard(run_id)
            if self._shards is not None:
                for key in [k for k in self._shards.followers if k[0] == run_id]:
                    self._shards.unfollow(*key)
            shutil.rmtree(run_dir(self.path, run_id), ignore_errors=True)
        return deleted

    def finish(
        self, run_id: str, status: RunStatus = "finished", *, error: str | None = None
    ) -> None:
        """Close a run with ``status`` (``Store.finish_run``)."""
        if status not in ("finished", "interrupted", "failed"):
            raise StoreError(f"finish_run: status must be finished|interrupted|failed: {status!r}")
        self._access.check_writable()
        full: DiskFull | None = None
        try:
            self._flush()
        except DiskFull as exc:  # the queued rows are lost (a --resume runs their cells again)
            full = exc
            status, error = "failed", error or str(exc)
        now = _now()

        def close(con: duckdb.DuckDBPyConnection) -> Any:
            return con.execute(
                "UPDATE bench_runs SET status = ?, finished_at = ?, "
                "error = coalesce(?, error) WHERE run_id = ?",
                [status, now, error, run_id],
            ).fetchone()

        try:
            try:
                got = self._access.run("closing a run", close)
            except DiskFull as exc:
                if not spend_reserve(self.runs):
                    raise
                log.warning("harness: freed the store's reserve to close run %s", run_id)
                try:  # one more try, with the reserve's room
                    got = self._access.run("closing a run", close)
                except DiskFull:
                    raise exc from None
        except StoreLocked as exc:
            write_finish(run_dir(self.path, run_id), status, now, error)
            self._ended(run_id)
            log.warning("harness: run %s ended as %s; %s (recorded later)", run_id, status, exc)
            if full is not None:
                raise full from None
            return
        except DiskFull as exc:
            with contextlib.suppress(OSError):  # a few bytes may still fit
                write_finish(run_dir(self.path, run_id), "failed", now, error or str(exc))
            self._ended(run_id)
            raise full or exc from None
        except BaseException:  # any other failure: the label is not held past the run
            self._ended(run_id)
            raise
        self._ended(run_id, closed=True)
        if full is not None:
            raise full
        if not got or not got[0]:
            raise StoreError(f"no run {run_id!r} in {self.path}")

    def _ended(self, run_id: str, *, closed: bool = False) -> None:
        """``closed``: the run's end is in ``bench_runs`` (its liveness file goes with it)."""
        self.open.discard(run_id)
        self._release_label(run_id)
        if (held := self._alive.pop(run_id, None)) is not None:
            held.release(remove=closed)

    def finish_all(self, status: RunStatus, *, error: str | None = None) -> None:
        """Finish every run still open, with ``status``; with an ``error`` (the store failed
        to write its last rows), each run is tried and a failure to close it is ignored."""
        for run_id in sorted(self.open):
            if error is None:
                self.finish(run_id, status)
            else:
                with contextlib.suppress(Exception):
                    self.finish(run_id, status, error=error)

    def release_labels(self) -> None:
        """Let go of every label lock and liveness lock (the store is closing)."""
        for lock in self._labels.values():
            lock.release()
        self._labels.clear()
        for held in self._alive.values():
            if held is not None:
                held.release()
        self._alive.clear()

    def check(self, run_ids: set[str]) -> None:
        """Raise :class:`UnknownRun` unless every one of ``run_ids`` is in ``bench_runs``."""
        self._access.check_writable()
        unknown = run_ids - self._known
        if not unknown:
            return
        known = self._access.run(
            "looking up runs",
            lambda con: con.execute(
                "SELECT run_id FROM bench_runs WHERE list_contains(?, run_id)", [sorted(unknown)]
            ).fetchall(),
            writes=False,
        )
        self._known.update(r[0] for r in known)
        missing = sorted(run_ids - self._known)
        if missing:
            raise UnknownRun(f"results for unknown run(s) {missing}: begin_run first")

    def check_one(self, run_id: str) -> None:
        """:meth:`check` of one run, whose error names the database."""
        try:
            self.check({run_id})
        except UnknownRun:
            raise UnknownRun(f"no run {run_id!r} in {self.path}") from None
