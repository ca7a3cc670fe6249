"""The event classes of a run, for ``match`` in an ``on_event`` callback (see
:mod:`harness.core.events`)."""

import warnings
from typing import Any

from harness.core.events import *  # noqa: F403
from harness.core.events import RunWarning
from harness.core.events import __all__ as __all__


def __getattr__(name: str) -> Any:
    """``Warning`` is the deprecated name of :class:`RunWarning` (it shadowed the builtin)."""
    if name == "Warning":
        warnings.warn(
            "harness.events.Warning is deprecated; use RunWarning",
            DeprecationWarning,
            stacklevel=2,
        )
        return RunWarning
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
