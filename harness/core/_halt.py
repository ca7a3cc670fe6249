"""The halt signal: :class:`HaltRun`, a request to end the run as ``error_halted``.

Hooks, the ``can_use_tool`` callback and tools return it; the kernel acts on it. It sits in the
bottom layer because tools, below the kernel, return it. A mode ends a run differently, by
returning :class:`~harness.kernel.Halt` from ``iterate``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["HaltRun"]


@dataclass(slots=True, frozen=True)
class HaltRun:
    """End the run as ``error_halted``; ``reason`` becomes ``Result.halted_reason``."""

    reason: str
