"""Graphs for the tests that check imports (tests/test_layers.py, tests/test_rooms.py)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

__all__ = ["first_cycle"]


def first_cycle(graph: Mapping[str, Iterable[str]]) -> list[str] | None:
    """A cycle of ``graph`` (node -> the nodes it points at) as ``[a, b, ..., a]``, the first
    a depth-first walk in sorted order meets; None when there is none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        path.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return [*path[path.index(m) :], m]
            if m not in state and (found := visit(m)) is not None:
                return found
        path.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state and (found := visit(n)) is not None:
            return found
    return None
