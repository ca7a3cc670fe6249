"""Old import path of :mod:`harness.core.result`, kept so that existing imports work.

A package rather than a module so that git sees the move of the module to ``harness/core/`` as a
rename (a file left at the old path would hide it when branches are merged).
"""

from typing import Any

from harness.core import result as _moved
from harness.core.result import *  # noqa: F403
from harness.core.result import __all__ as __all__


def __getattr__(name: str) -> Any:
    """Names outside ``__all__`` (private helpers, deprecated aliases) come from the new home."""
    return getattr(_moved, name)
