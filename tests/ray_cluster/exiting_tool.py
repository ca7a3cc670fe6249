"""A tool plug-in that raises ``SystemExit`` (imported by the Ray workers of
``test_round14_ray_spans.py`` by its dotted name)."""

from __future__ import annotations


def exits() -> str:
    """Exit."""
    raise SystemExit(7)
