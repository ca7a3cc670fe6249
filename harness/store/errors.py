"""The store's errors (all :class:`~harness.errors.HarnessError`)."""

from __future__ import annotations

from harness.errors import HarnessError

__all__ = ["SchemaTooNew", "StoreError", "StoreLocked"]


class StoreError(HarnessError):
    """The results store cannot do what was asked (bad row, unknown run, unreadable file...)."""


class SchemaTooNew(StoreError):
    """The file was written by a newer harness than this one."""


class StoreLocked(StoreError):
    """Another process (or another writer in this one) has the database open.

    ``pid`` is the holder's process id when it could be found.
    """

    def __init__(self, message: str, *, pid: int | None = None) -> None:
        super().__init__(message)
        self.pid = pid
