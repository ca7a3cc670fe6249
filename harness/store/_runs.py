"""The run methods of :class:`~harness.store._writer.Store`: opening a run (one process per
label, see :mod:`harness.store._labels`), deleting one that stored nothing, and closing one
(also when the disk is full, see :mod:`harness.store._diskfull`)."""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shutil
import socket
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import duckdb

from harness._version import __version__
from harness.errors import DiskFull, StoreError, StoreLocked
from harness.store._catalog import reopen_run, write_finish
from harness.store._diskfull import DiskPatience, spend_reserve
from harness.store._labels import LabelLock
from harness.store._rows import json_text
from harness.store._shards import ShardWriter, run_dir

__all__ = ["RunLifecycle", "RunStatus"]

log = logging.getLogger("harness.store")

RunStatus = Literal["finished", "interrupted", "failed"]


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


class RunLifecycle:
    """Mixed into :class:`~harness.store._writer.Store`, which provides the attributes and the
    methods below that raise NotImplementedError here."""

    path: Path
    runs: Path
    disk: DiskPatience
    shards: ShardWriter | None
    _open_runs: set[str]
    _known_runs: set[str]
    _labels: dict[str, LabelLock]
    _run_labels: dict[str, str]

    def _writable(self) -> None:
        raise NotImplementedError

    def _flush(self) -> None:
        raise NotImplementedError

    def _catalog(self) -> contextlib.AbstractContextManager[duckdb.DuckDBPyConnection]:
        raise NotImplementedError

    def _in_catalog(
        self, what: str, fn: Callable[[duckdb.DuckDBPyConnection], Any], *, writes: bool = True
    ) -> Any:
        raise NotImplementedError

    def begin_run(
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
        """Start a run (a ``bench_runs`` row with status ``running``) and return its id.

        With ``resume=True`` and a ``label``, the latest run of that label is reopened instead
        (status back to ``running``, its suites/modes/providers extended with these) and its id
        returned, so the resumed cells land in the same run; without such a run, a new one.

        A ``label`` is run by one process at a time: its lock is taken before anything else and
        held until :meth:`finish_run`; another process holding it raises
        :class:`~harness.errors.LabelBusy` naming that process (see :mod:`._labels`).
        """
        self._writable()
        lock = self._lock_label(label)

        def begin(con: duckdb.DuckDBPyConnection) -> str:
            now = _now()
            if resume and label is not None:
                found = reopen_run(con, label, suites, modes, providers, epochs)
                if found is not None:
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
            opened = self._in_catalog("opening a run", begin)
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
        self._open_runs.add(run_id)
        self._known_runs.add(run_id)
        with contextlib.suppress(OSError):
            (run_dir(self.path, run_id) / "finish.json").unlink()
        return run_id

    def discard_run(self, run_id: str) -> bool:
        """Delete a run that stored nothing (it failed before its first cell), so that
        ``--run latest`` never picks it; returns whether it was deleted (not when the disk is
        full: the run then stays, and is closed ``failed``)."""

        def delete(con: duckdb.DuckDBPyConnection) -> bool:
            got = con.execute(
                "DELETE FROM bench_runs WHERE run_id = ? AND NOT EXISTS "
                "(SELECT 1 FROM results WHERE run_id = ?)",
                [run_id, run_id],
            ).fetchone()
            return bool(got and got[0])

        try:
            self._flush()
            deleted = bool(self._in_catalog("deleting a run", delete))
        except DiskFull as exc:
            log.warning("harness: run %s not deleted: %s", run_id, exc)
            return False
        if deleted:
            self._open_runs.discard(run_id)
            self._known_runs.discard(run_id)
            self._release_label(run_id)
            if self.shards is not None:
                for key in [k for k in self.shards.followers if k[0] == run_id]:
                    self.shards.unfollow(*key)
            shutil.rmtree(run_dir(self.path, run_id), ignore_errors=True)
        return deleted

    def finish_run(
        self, run_id: str, status: RunStatus = "finished", *, error: str | None = None
    ) -> None:
        """Close a run: ``finished_at`` now and ``status`` (finished, interrupted or failed).

        Queued rows are written first. When another process holds the file past
        ``lock_timeout_s``, the ending is written to the run's ``finish.json`` instead (with a
        warning); the next writer to open the file records it. The run's label is free again
        afterwards.

        A disk full past the budget: the rows still queued are lost (their cells run again on
        ``--resume``), the run is ``failed`` with an error naming the disk (written after
        freeing the store's reserve, see :func:`~harness.store._diskfull.spend_reserve`; when
        even that does not fit, the next writer marks the run ``interrupted``), and
        :class:`DiskFull` is raised."""
        if status not in ("finished", "interrupted", "failed"):
            raise StoreError(f"finish_run: status must be finished|interrupted|failed: {status!r}")
        self._writable()
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
                got = self._in_catalog("closing a run", close)
            except DiskFull as exc:
                if not spend_reserve(self.runs):
                    raise
                log.warning("harness: freed the store's reserve to close run %s", run_id)
                try:  # one more try, with the reserve's room
                    got = self._in_catalog("closing a run", close)
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
        self._ended(run_id)
        if full is not None:
            raise full
        if not got or not got[0]:
            raise StoreError(f"no run {run_id!r} in {self.path}")

    def _ended(self, run_id: str) -> None:
        self._open_runs.discard(run_id)
        self._release_label(run_id)
