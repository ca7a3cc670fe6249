"""Lock files a forked child must let go of without unlocking them: an ``flock`` belongs to
the open file, which a fork shares, so a child outliving its parent (a worker) kept the
parent's locks (a label, a run's liveness), and ``LOCK_UN`` in the child would drop them for
the parent too. Each held lock is :func:`kept` here; after a fork the child closes its copy
of each descriptor (``_forget_in_child``)."""

from __future__ import annotations

import os
import threading
from typing import Protocol

__all__ = ["Forgets", "dropped", "kept"]


class Forgets(Protocol):
    def _forget_in_child(self) -> None: ...


_HELD: set[Forgets] = set()
_HELD_LOCK = threading.Lock()


def kept(lock: Forgets) -> None:
    """``lock`` is held: a forked child closes its copy."""
    with _HELD_LOCK:
        _HELD.add(lock)


def dropped(lock: Forgets) -> None:
    """``lock`` is released."""
    with _HELD_LOCK:
        _HELD.discard(lock)


def _after_fork_in_child() -> None:
    global _HELD_LOCK
    _HELD_LOCK = threading.Lock()  # (a thread of the parent may have held it at the fork)
    for lock in list(_HELD):
        lock._forget_in_child()
    _HELD.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
