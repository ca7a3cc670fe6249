"""Old import path of :mod:`harness.core.budget`, kept so that existing imports work.

The kernel itself imports the new home; these re-exports are for code written before the move.
"""

from typing import Any

from harness.core import budget as _moved
from harness.core.budget import *  # noqa: F403
from harness.core.budget import __all__ as __all__


def __getattr__(name: str) -> Any:
    """Names outside ``__all__`` (private helpers, deprecated aliases) come from the new home."""
    return getattr(_moved, name)
