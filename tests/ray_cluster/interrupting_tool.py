"""A tool plug-in that raises ``KeyboardInterrupt`` (imported by the Ray workers of
``test_round20a_ray_interrupt.py`` by its dotted name)."""

from __future__ import annotations


def interrupts() -> str:
    """Interrupt."""
    raise KeyboardInterrupt
