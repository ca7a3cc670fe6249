"""The store's errors (all :class:`~harness.errors.HarnessError`; defined in :mod:`harness.errors`,
re-exported here)."""

from __future__ import annotations

from harness.errors import DiskFull, LabelBusy, SchemaTooNew, StoreError, StoreLocked, UnknownRun

__all__ = ["DiskFull", "LabelBusy", "SchemaTooNew", "StoreError", "StoreLocked", "UnknownRun"]
