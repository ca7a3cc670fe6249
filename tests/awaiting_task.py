"""The task awaiting a plug-in's own task: how a hostile tool reaches its cell's worker or its
run's task (adversary round 18, part A)."""

from __future__ import annotations

import asyncio
from typing import Any


def awaiting(me: asyncio.Task[Any] | None) -> asyncio.Task[Any]:
    """The task whose coroutine chain waits on ``me`` (found through ``asyncio.all_tasks()``:
    the frame holding ``me`` as its ``task``)."""
    for task in asyncio.all_tasks():
        coro: Any = task.get_coro()
        while coro is not None:
            frame = getattr(coro, "cr_frame", None)
            if frame is not None and frame.f_locals.get("task") is me and task is not me:
                return task
            coro = getattr(coro, "cr_await", None)
    raise LookupError("no task awaits this one")
