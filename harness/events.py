"""The event classes of a run, for ``match`` in an ``on_event`` callback (see
:mod:`harness.core.events`)."""

import warnings
from typing import Any

from harness.core.events import (
    CallFinished,
    CallStarted,
    Compaction,
    Content,
    Done,
    Event,
    Iteration,
    RunWarning,
    StructuredRetry,
    SubagentResult,
    SubagentSpawn,
    Submitted,
    Thinking,
    ToolCallEvent,
    ToolResultEvent,
    ToolUI,
    Usage,
    event_classes,
)

__all__ = [
    "CallFinished",
    "CallStarted",
    "Compaction",
    "Content",
    "Done",
    "Event",
    "Iteration",
    "RunWarning",
    "StructuredRetry",
    "SubagentResult",
    "SubagentSpawn",
    "Submitted",
    "Thinking",
    "ToolCallEvent",
    "ToolResultEvent",
    "ToolUI",
    "Usage",
    "event_classes",
]


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
