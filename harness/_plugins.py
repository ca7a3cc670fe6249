"""Registries: one per kind of extension, fed by the built-ins and by entry points.

Each registry (modes, graders, provider kinds, executors, task sources, tools) maps a name to an
object. A name is found, in order: among the built-ins (registered lazily as ``"module:attr"``
strings, so that nothing is imported until it is used), among the objects registered in this
process with :meth:`Registry.register`, and among the installed distributions' entry points of the
registry's group (``harness.modes``, ``harness.graders``, ``harness.providers``,
``harness.executors``, ``harness.sources``, ``harness.tools``). Anywhere a name is accepted, a
``"package.module:attr"`` reference works too: it is imported directly.

A plug-in package declares, in its ``pyproject.toml``::

    [project.entry-points."harness.modes"]
    greedy = "mypkg.modes:Greedy"

and ``harness plugins`` lists every registered extension with where it came from.
"""

from __future__ import annotations

import difflib
import importlib
import re
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Generic, TypeVar

from harness._files import init_file_problem, module_file_problem
from harness._oneline import flat
from harness.errors import ConfigError

__all__ = [
    "PluginInfo",
    "Registry",
    "described",
    "import_reference",
    "is_reference",
    "shown_value",
]

T = TypeVar("T")

_REFERENCE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


def is_reference(spec: str) -> bool:
    """Does ``spec`` look like a ``package.module:attr`` reference?"""
    return bool(_REFERENCE.match(spec))


def import_reference(spec: str, *, what: str) -> Any:
    """Import ``package.module:attr`` (``attr`` may be dotted); a :class:`ConfigError` that names
    ``what`` was being resolved and why it failed."""
    module_name, _, attr = spec.partition(":")
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as exc:
        name = getattr(exc, "name", None)
        why = module_file_problem(name, sys.path) if isinstance(name, str) and name else None
        if why:  # the file is there but is no regular file (Python's import passes over it)
            said = f"{what}: cannot import {module_name!r} for {spec!r}: {why}; refused"
            raise ConfigError(said) from None
        raise ConfigError(
            f"{what}: cannot import {module_name!r} for {spec!r}: {exc}; install the package "
            "that provides it, or check the spelling"
        ) from None
    except KeyboardInterrupt:  # Ctrl-C during a slow import: the CLI exits 130
        raise
    except BaseException as exc:  # the plug-in's own code failed as it was imported: any
        # exception, SystemExit, GeneratorExit or a BaseException subclass of its own
        raise ConfigError(
            f"{what}: importing {module_name!r} for {spec!r} raised {described(exc)}; fix or "
            "remove the plug-in"
        ) from None
    for part in attr.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            why = init_file_problem(target)
            raise ConfigError(
                f"{what}: module {module_name!r} has no attribute {attr!r} (from {spec!r})"
                + (f": {why}; refused" if why else "")
            ) from None
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # a module __getattr__ or a property that raises
            raise ConfigError(
                f"{what}: reading {attr!r} of {module_name!r} (from {spec!r}) raised "
                f"{described(exc)}"
            ) from None
    return target


def described(exc: BaseException) -> str:
    """``RuntimeError: boom``, on one line (a message spanning lines is joined): what a
    plug-in raised, for a one-line error. Never raises itself: an exception whose ``__str__``
    raises (or returns no string) is described by its type alone."""
    name = type(exc).__name__
    try:
        text = str(exc)
    except Exception:
        return f"{name} (its message could not be read)"
    text = flat(text)
    return f"{name}: {text}" if text else name


def shown_value(value: object, limit: int = 200) -> str:
    """``repr(value)`` cut to ``limit`` characters, for an error naming what a plug-in returned.
    Never raises itself: a value whose ``__repr__`` raises is named by its type (a hook's or a
    ``can_use_tool``'s such answer ended the run as ``error_during_execution`` naming the
    ``__repr__``'s error, not the plug-in's unsupported answer; adversary round 13, part A)."""
    try:
        text = repr(value)
    except Exception:
        return f"<{type(value).__name__} object (its repr raised)>"
    # Without memory addresses (``<Future at 0x7f4c86c12b10 state=pending>``): the model is told
    # some of these (a ``can_use_tool``'s or a hook's answer), and an address made each replay
    # of the run send other text (adversary round 20, part A).
    text = _ADDRESS.sub("", text)
    return text if len(text) <= limit else text[:limit] + "..."


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


@dataclass(frozen=True, slots=True)
class PluginInfo:
    """One registered extension: its registry, name, target and where it came from."""

    kind: str
    name: str
    target: str
    #: ``builtin``, ``entry point (DIST VERSION)`` or ``registered in code``.
    origin: str


@dataclass(slots=True)
class _Entry:
    target: str
    origin: str
    loaded: Any = None
    is_loaded: bool = False


class Registry(Generic[T]):
    """Names -> extensions of one kind. ``check`` turns a loaded object into what callers use
    (or raises :class:`ConfigError`): e.g. a mode registry accepts Mode classes and objects."""

    def __init__(
        self,
        kind: str,
        group: str,
        builtins: dict[str, str],
        *,
        check: Callable[[Any, str], T] | None = None,
        normalize: Callable[[str], str] = lambda name: name,
    ) -> None:
        self.kind = kind
        self.group = group
        self._check = check
        self._normalize = normalize
        self._entries: dict[str, _Entry] = {
            name: _Entry(target, "builtin") for name, target in builtins.items()
        }
        self._builtins = frozenset(builtins)
        self._scanned = False
        self._lock = threading.RLock()

    # --- registration --------------------------------------------------------------------------

    def register(self, name: str, obj: Any, *, replace: bool = False) -> None:
        """Register ``obj`` (or a ``"module:attr"`` string) under ``name`` in this process."""
        key = self._normalize(name)
        with self._lock:
            if key in self._entries and not replace:
                raise ConfigError(
                    f"{self.kind} {name!r} is already registered "
                    f"({self._entries[key].origin}); pass replace=True to override it"
                )
            if isinstance(obj, str):
                self._entries[key] = _Entry(obj, "registered in code")
            else:
                target = f"{getattr(obj, '__module__', '?')}:{getattr(obj, '__qualname__', obj)}"
                self._entries[key] = _Entry(target, "registered in code", obj, True)

    def _scan(self) -> None:
        """Add the entry points of this registry's group (once; built-ins keep their names)."""
        with self._lock:
            if self._scanned:
                return
            self._scanned = True
            for ep in entry_points(group=self.group):
                key = self._normalize(ep.name)
                if key in self._builtins:
                    continue  # a plug-in cannot shadow a built-in
                dist = getattr(ep, "dist", None)
                where = f"{dist.name} {dist.version}" if dist is not None else "unknown package"
                self._entries.setdefault(key, _Entry(ep.value, f"entry point ({where})"))

    # --- lookup --------------------------------------------------------------------------------

    def names(self) -> list[str]:
        """Every registered name (built-ins first, then the rest, sorted)."""
        self._scan()
        rest = sorted(n for n in self._entries if n not in self._builtins)
        return [n for n in self._entries if n in self._builtins] + rest

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        self._scan()
        return self._normalize(name) in self._entries or is_reference(name)

    def infos(self) -> Iterator[PluginInfo]:
        self._scan()
        for name in self.names():
            entry = self._entries[name]
            yield PluginInfo(self.kind, name, entry.target, entry.origin)

    def get(self, spec: str) -> T:
        """The extension named ``spec`` (a registered name or ``module:attr``)."""
        key = self._normalize(spec.strip())
        self._scan()
        entry = self._entries.get(key)
        if entry is None:
            if is_reference(spec.strip()):
                return self._checked(import_reference(spec.strip(), what=self.kind), spec)
            raise ConfigError(self.unknown(spec))
        with self._lock:
            if not entry.is_loaded:
                entry.loaded = import_reference(entry.target, what=f"{self.kind} {key!r}")
                entry.is_loaded = True
        return self._checked(entry.loaded, spec)

    def _checked(self, obj: Any, spec: str) -> T:
        if self._check is None:
            return obj  # type: ignore[no-any-return]
        try:
            return self._check(obj, spec)
        except (ConfigError, KeyboardInterrupt):
            raise
        except BaseException as exc:  # e.g. a plug-in class whose constructor raises, exits...
            said = described(exc)
            raise ConfigError(f"{self.kind} {spec!r}: loading it raised {said}") from None

    def unknown(self, spec: str) -> str:
        """The "unknown NAME" message: the closest name, then every registered one."""
        names = self.names()
        close = difflib.get_close_matches(self._normalize(spec), names, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        plugins = [n for n in names if n not in self._builtins]
        known = f"built-ins: {', '.join(n for n in names if n in self._builtins)}"
        if plugins:
            known += f"; plug-ins: {', '.join(plugins)}"
        return (
            f"unknown {self.kind} {spec!r}{hint} ({known}; or a 'package.module:attr' "
            f"reference, or a package registering the entry point group {self.group!r})"
        )
