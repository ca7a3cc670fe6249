"""Resolving a mode: :func:`resolve_mode` turns a builtin name, a Mode class or a Mode object
into the mode a run uses (:data:`BUILTIN_MODES` lists the names).

The Mode protocol itself, with ``Continue``, ``Halt`` and ``ContextOverflow``, lives in
:mod:`harness.kernel._state`, which drives it; they are re-exported here for existing imports.
"""

from __future__ import annotations

import inspect
from typing import Any

from harness._plugins import Registry, described, is_reference
from harness.errors import ConfigError, ContextOverflow
from harness.kernel._state import Continue, Halt, Mode

__all__ = [
    "BUILTIN_MODES",
    "MODES",
    "ContextOverflow",
    "Continue",
    "Halt",
    "Mode",
    "check_mode_spec",
    "mode_label",
    "resolve_mode",
]


#: The built-in modes, by name (``plan`` is accepted for ``plan_and_solve``).
BUILTIN_MODES = ("react", "plan_and_solve", "reflexion", "orchestrate")

#: Modes by name: the built-ins, modes registered in code, and the entry points of the group
#: ``harness.modes``; a ``"package.module:Class"`` reference works wherever a name does.
MODES: Registry[Any] = Registry(
    "mode",
    "harness.modes",
    {
        "react": "harness.modes._react:ReAct",
        "plan_and_solve": "harness.modes._plan_and_solve:PlanAndSolve",
        "reflexion": "harness.modes._reflexion:Reflexion",
        "orchestrate": "harness.modes._orchestrate:Orchestrate",
    },
    normalize=lambda name: name if is_reference(name) else _mode_key(name),
)


def _mode_key(name: str) -> str:
    key = name.strip().lower().replace("-", "_")
    return "plan_and_solve" if key == "plan" else key


def mode_label(spec: str) -> str:
    """The name a mode given as ``spec`` is stored under (results.mode): a registered name in
    its canonical form (``Plan-And-Solve`` -> ``plan_and_solve``), a reference as given."""
    spec = spec.strip()
    return spec if is_reference(spec) else _mode_key(spec)


def check_mode_spec(spec: str) -> str:
    """Resolve ``spec`` once (raising :class:`ConfigError` when it is not a mode) and return its
    label (:func:`mode_label`)."""
    try:
        resolve_mode(spec)
    except (ConfigError, KeyboardInterrupt):
        raise
    except BaseException as exc:  # a plug-in object that raises as it is looked at (its repr...)
        raise ConfigError(f"mode {spec!r}: checking it raised {described(exc)}") from None
    return mode_label(spec)


def resolve_mode(spec: Any) -> Mode:
    """A mode name (built-in or registered: :data:`MODES`), a ``"package.module:Class"``
    reference, a Mode class or a Mode object -> the Mode a run uses."""
    if isinstance(spec, str):
        try:
            spec = MODES.get(spec)
        except ConfigError as exc:
            said = str(exc) if str(exc).startswith("mode") else f"mode: {exc}"
            raise ConfigError(
                f"{said}; a mode is an object with init(state) and async iterate(state)"
            ) from None
    if isinstance(spec, type):
        try:
            spec = spec()
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # a plug-in's constructor: any failure is one line (its
            # SystemExit too: it must not end the command, with exit 0, before any cell)
            raise ConfigError(
                f"mode: cannot instantiate {spec.__name__}(): {described(exc)}"
            ) from None
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
