"""Resolving a mode: :func:`resolve_mode` turns a builtin name, a Mode class or a Mode object
into the mode a run uses (:data:`BUILTIN_MODES` lists the names).

The Mode protocol itself, with ``Continue``, ``Halt`` and ``ContextOverflow``, lives in
:mod:`harness.kernel._mode`, which drives it; they are re-exported here for existing imports.
"""

from __future__ import annotations

import difflib
import inspect
from typing import Any

from harness.errors import ConfigError
from harness.kernel._mode import ContextOverflow, Continue, Halt, Mode

__all__ = ["BUILTIN_MODES", "ContextOverflow", "Continue", "Halt", "Mode", "resolve_mode"]


BUILTIN_MODES = ("react", "plan_and_solve", "reflexion", "orchestrate")


def resolve_mode(spec: Any) -> Mode:
    """``"react"``, ``"plan_and_solve"``, ``"reflexion"``, ``"orchestrate"``, a Mode class or a
    Mode object."""
    if isinstance(spec, str):
        key = spec.strip().lower().replace("-", "_")
        if key == "react":
            from harness.modes._react import ReAct

            return ReAct()
        if key in ("plan_and_solve", "plan"):
            from harness.modes._plan_and_solve import PlanAndSolve

            return PlanAndSolve()
        if key == "reflexion":
            from harness.modes._reflexion import Reflexion

            return Reflexion()
        if key == "orchestrate":
            from harness.modes._orchestrate import Orchestrate

            return Orchestrate()
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
