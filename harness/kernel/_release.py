"""Closing a run: its provider (when the run owns it) and its temporary workspace."""

from __future__ import annotations

from typing import Any

from harness.events import RunWarning
from harness.kernel._isolated import called, owned
from harness.kernel._state import State
from harness.kernel._told import told

__all__ = ["release"]


async def release(state: State, owns_provider: bool) -> None:
    """Close the run's provider (when it owns it) and remove its temporary workspace."""
    if owns_provider:  # closing must not hide the result: what it raised is a warning
        done, value = await _closed(state.provider)
        if not done:
            state.emit(RunWarning(f"provider close failed: {await told(value)}", "provider"))
    state.ctx.workspace.cleanup()


async def _closed(provider: Any) -> tuple[bool, Any]:
    """``provider.aclose()``: the harness's own awaited in the run's task (a recording's
    transport saves its cassette only when that task is not being cancelled); a plug-in's (a
    plug-in kind, or a provider calling an httpx transport of the user's) as a plug-in's call
    (:func:`~harness.kernel._isolated.called`): raising ``GeneratorExit`` or cancelling the
    run's task there lost the finished run's Result (``harness.run`` raised it; a bench cell
    was that error; adversary round 21, part A)."""
    if owned(provider):
        try:
            await provider.aclose()
        except Exception as exc:
            return False, exc
        return True, None
    return await called(_close, provider)  # (a task that cancelled itself: its failure)


def _close(provider: Any) -> Any:
    return provider.aclose()
