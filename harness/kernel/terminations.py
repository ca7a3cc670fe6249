"""Old import path of the names now in :mod:`harness.core` (module ``_terminations``), kept so that
existing imports work.

The kernel itself imports the new home; these re-exports are for code written before the move.
"""

from typing import Any

from harness.core import _terminations as _moved
from harness.core._terminations import *  # noqa: F403
from harness.core._terminations import __all__ as __all__


def __getattr__(name: str) -> Any:
    """Names outside ``__all__`` (private helpers, deprecated aliases) come from the new home."""
    return getattr(_moved, name)
