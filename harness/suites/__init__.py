"""harness.suites: what to run. Suite files (YAML, validated by pydantic), task sources
such as ``bfcl:`` and the suite audit. The fields: docs/suites.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness._exports import lazy_exports

if TYPE_CHECKING:
    from harness.suites._audit import audit_suites as audit_suites
    from harness.suites._load import load_suite as load_suite
    from harness.suites._load import load_suites as load_suites
    from harness.suites._sources import SOURCES as SOURCES
    from harness.suites._suite import Suite as Suite
    from harness.suites._suite import Task as Task
    from harness.suites._suite import UserTurn as UserTurn

#: Each private module and the public names it exports here (``__all__`` derives from it).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "harness.suites._audit": ("audit_suites",),
    "harness.suites._load": ("load_suite", "load_suites"),
    "harness.suites._sources": ("SOURCES",),
    "harness.suites._suite": ("Suite", "Task", "UserTurn"),
}
__all__, __getattr__ = lazy_exports(__name__, _EXPORTS)
