"""The Mode protocol: how a strategy drives one iteration of the loop.

A mode implements ``init(state)`` (once, before the first iteration) and
``async iterate(state) -> Continue | Halt``; optionally
``productivity_signal(prev: ProgressSnapshot, state) -> bool`` replaces the kernel's default
no-progress check. A mode that halts sets ``state.finish_reason`` (``state.halt(...)``); a halt
without one ends the run as ``stop``. Raising :class:`ContextOverflow` asks the kernel for reactive
compaction and one retry; any other exception ends the run as ``error_during_execution``.

Per-run data belongs in ``state.mode_state``, so one mode object can serve many runs.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from harness.errors import ConfigError, ContextOverflow

if TYPE_CHECKING:
    from harness.kernel.state import State

__all__ = ["BUILTIN_MODES", "ContextOverflow", "Continue", "Halt", "Mode", "resolve_mode"]


@dataclass(slots=True, frozen=True)
class Continue:
    """Keep looping (the kernel checks its caps before the next iteration)."""


@dataclass(slots=True, frozen=True)
class Halt:
    """Stop: the run ends with ``state.finish_reason`` (``stop`` when unset)."""


@runtime_checkable
class Mode(Protocol):
    name: str

    def init(self, state: State) -> Awaitable[None] | None: ...

    async def iterate(self, state: State) -> Continue | Halt: ...


BUILTIN_MODES = ("react", "plan_and_solve", "reflexion")


def resolve_mode(spec: Any) -> Mode:
    """``"react"``, ``"plan_and_solve"``, ``"reflexion"``, a Mode class or a Mode object."""
    if isinstance(spec, str):
        key = spec.strip().lower().replace("-", "_")
        if key == "react":
            from harness.modes.react import ReAct

            return ReAct()
        if key in ("plan_and_solve", "plan"):
            from harness.modes.plan_and_solve import PlanAndSolve

            return PlanAndSolve()
        if key == "reflexion":
            from harness.modes.reflexion import Reflexion

            return Reflexion()
        close = difflib.get_close_matches(key, BUILTIN_MODES, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigError(
            f"mode: unknown mode {spec!r}{hint} Builtins: {', '.join(BUILTIN_MODES)}, "
            "or pass an object with init(state) and async iterate(state)"
        )
    if isinstance(spec, type):
        try:
            spec = spec()
        except TypeError as exc:
            raise ConfigError(f"mode: cannot instantiate {spec.__name__}() : {exc}") from None
    if not (callable(getattr(spec, "iterate", None)) and callable(getattr(spec, "init", None))):
        raise ConfigError(
            f"mode: {spec!r} is not a Mode: it needs init(state) and async iterate(state)"
        )
    if not inspect.iscoroutinefunction(spec.iterate):
        raise ConfigError(f"mode: {spec!r}.iterate must be `async def iterate(self, state)`")
    signal = getattr(spec, "productivity_signal", None)
    if signal is not None and (not callable(signal) or inspect.iscoroutinefunction(signal)):
        raise ConfigError(
            f"mode: {spec!r}.productivity_signal must be a plain (sync) method "
            "productivity_signal(prev, state) -> bool"
        )
    if not isinstance(getattr(spec, "name", None), str):
        raise ConfigError(f"mode: {spec!r} needs a 'name' string attribute")
    return spec  # type: ignore[no-any-return]
