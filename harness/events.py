"""The event classes of a run, for ``match`` in an ``on_event`` callback (see
:mod:`harness.core.events`)."""

from harness.core.events import (
    CallFinished,
    CallStarted,
    Compaction,
    Content,
    Done,
    Event,
    Iteration,
    StructuredRetry,
    SubagentResult,
    SubagentSpawn,
    Submitted,
    Thinking,
    ToolCallEvent,
    ToolResultEvent,
    ToolUI,
    Usage,
    Warning,
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
    "StructuredRetry",
    "SubagentResult",
    "SubagentSpawn",
    "Submitted",
    "Thinking",
    "ToolCallEvent",
    "ToolResultEvent",
    "ToolUI",
    "Usage",
    "Warning",
    "event_classes",
]
