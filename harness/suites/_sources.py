"""Task sources: suites made by code rather than written out in YAML (the :data:`SOURCES`
registry), such as ``bfcl:simple_python``.

A source is a callable ``source(argument, options) -> Suite``: ``argument`` is what follows
``NAME:`` in a suite path (``simple_python`` in ``bfcl:simple_python``; None from YAML), and
``options`` the other keys of a YAML ``source:`` mapping (``{kind: bfcl, categories: [...]}``
gives ``{"categories": [...]}``). It builds :class:`~harness.suites.Task` objects in code; a task
may carry its own tool factory (:meth:`Task.with_tools`). Register a source under the entry point
group ``harness.sources``, or name it as ``package.module:attr`` (then a suite path is
``package.module:attr:ARGUMENT``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from harness._plugins import Registry, described
from harness.errors import ConfigError, SuiteError
from harness.kernel._isolated import cancels, undo_own_cancel
from harness.suites._suite import Suite

__all__ = ["SOURCES", "Source", "cell_options", "load_source", "source_spec"]

#: ``source(argument, options) -> Suite``.
Source = Callable[[str | None, Mapping[str, Any]], Any]


def _callable(obj: Any, spec: str) -> Source:
    if not callable(obj):
        raise ConfigError(f"task source {spec!r}: {obj!r} is not callable (argument, options)")
    return obj  # type: ignore[no-any-return]


#: Task sources by name: entry points of the group ``harness.sources`` (the harness's own
#: ``bfcl`` source is registered that way too), sources registered in code, or references.
SOURCES: Registry[Source] = Registry("task source", "harness.sources", {}, check=_callable)

_REFERENCE_PATH = re.compile(r"^([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+:[A-Za-z_][\w.]*)(?::(.*))?$")
_NAMED_PATH = re.compile(r"^([A-Za-z_][\w-]*):(.*)$")


def source_spec(path: str) -> tuple[str, str | None] | None:
    """``(source, argument)`` when ``path`` names a task source (``bfcl:simple_python``,
    ``mypkg.sources:mine:ARG``), else None (a file or folder path)."""
    found = _REFERENCE_PATH.match(path)
    if found is not None:
        return found.group(1), found.group(2)
    found = _NAMED_PATH.match(path)
    if found is not None and found.group(1) in SOURCES:
        return found.group(1), found.group(2) or None
    return None


def load_source(
    name: str, argument: str | None, options: Mapping[str, Any], *, where: str
) -> Suite:
    """The suite the source ``name`` makes; every failure is a :class:`SuiteError` naming
    ``where`` (the suite path or file)."""

    try:
        source = SOURCES.get(name)
        suite = source(argument, options)
    except SuiteError:
        raise
    except ConfigError as exc:
        raise SuiteError([f"{where}: {exc}"]) from None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # a plug-in's own failure: one line, never a traceback
        raise SuiteError([f"{where}: task source {name!r} raised {described(exc)}"]) from None
    if not isinstance(suite, Suite):
        raise SuiteError(
            [f"{where}: task source {name!r} returned {type(suite).__name__}, not a Suite"]
        )
    return suite


async def cell_options(task: Any) -> dict[str, Any]:
    """``task.run_options()`` for a cell, in the cell's task. A task source's tool factory runs
    there: one cancelling that task lost the cell, every such cell with it, and ``harness run``
    printed "0/3 cells", exit 0 (adversary round 17, part A). It is the cell's error now."""
    mark = cancels()
    try:
        options: dict[str, Any] = task.run_options()
    finally:
        own = await undo_own_cancel(mark)
    if own:
        raise ConfigError("the task's tool factory cancelled its run's task")
    return options
