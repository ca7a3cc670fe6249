"""Old import path of :mod:`harness.events`, kept so that existing imports work.

The kernel itself imports the new home; these re-exports are for code written before the move.
"""

from typing import Any

from harness import events as _moved
from harness.events import *  # noqa: F403
from harness.events import __all__ as __all__


def __getattr__(name: str) -> Any:
    """Names outside ``__all__`` (private helpers, deprecated aliases) come from the new home."""
    return getattr(_moved, name)
