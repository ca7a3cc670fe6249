"""A tool plug-in that cancels every task of its event loop, Ray's own included (imported by
the Ray workers of ``test_stop46_ray_liveness.py`` by its dotted name)."""

from __future__ import annotations

import asyncio


async def cancels_all() -> str:
    """Cancel everything."""
    for task in asyncio.all_tasks():
        task.cancel()
    await asyncio.sleep(0)
    return "cancelled"
