"""The store's errors (all :class:`~harness.errors.HarnessError`; defined in :mod:`harness.errors`,
re-exported here)."""

from __future__ import annotations

from harness.errors import SchemaTooNew, StoreError, StoreLocked, UnknownRun

__all__ = ["SchemaTooNew", "StoreError", "StoreLocked", "UnknownRun"]
