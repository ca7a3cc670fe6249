"""Old import path of :mod:`harness.core.terminations`, kept so that existing imports work.

The kernel itself imports the new home; these re-exports are for code written before the move.
"""

from typing import Any

from harness.core import terminations as _moved
from harness.core.terminations import *  # noqa: F403
from harness.core.terminations import __all__ as __all__


def __getattr__(name: str) -> Any:
    """Names outside ``__all__`` (private helpers, deprecated aliases) come from the new home."""
    return getattr(_moved, name)
