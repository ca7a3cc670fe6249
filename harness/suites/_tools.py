"""Custom tools in suites: ``tools_module: mytools.py`` (a file beside the suite) and
``module:function`` names in ``tools:``.

Every module-level tool object of the ``tools_module`` file (``@harness.tool`` functions, or any
object with the tool protocol) can be named in ``tools:`` by its tool name. A ``module:function``
entry imports ``module`` with the suite file's folder first on ``sys.path`` and uses ``function``:
a tool object as is, a plain function made into one with :func:`harness.tool`.

Both are imported when the suite loads (``harness suites validate`` too), in the harness's own
process, since tools run there: like python graders, they run with your user's rights. Every
problem (a file that is missing or fails to import, a name that is no tool, a clash with a
builtin) is an error naming the suite file, the task and the field.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from harness._files import MAX_INPUT_BYTES, file_kind, module_file_problem
from harness.errors import ConfigError
from harness.tools._base import Tool, tool
from harness.tools._registry import BUILTIN_TOOLS, TOOLS, resolve_tools

__all__ = ["ToolCatalog", "added_tool_clash", "is_tool_ref"]


def is_tool_ref(name: str) -> bool:
    """``module:function`` (rather than a tool name)?"""
    return ":" in name


@contextlib.contextmanager
def _folder_first(folder: Path) -> Iterator[None]:
    entry = str(folder)
    sys.path.insert(0, entry)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(entry)


def _as_tool(value: Any, where: str) -> Tool:
    candidate = value
    if callable(value) and not isinstance(value, Tool) and not isinstance(value, type):
        try:
            candidate = tool(value)
        except Exception as exc:
            problem = f"{type(exc).__name__}: {exc}"
            raise ConfigError(f"{where} cannot be made a tool: {problem}") from None
    try:
        (made,) = resolve_tools([candidate])
    except ConfigError as exc:
        raise ConfigError(f"{where} is not a usable tool: {exc}") from None
    return made


class ToolCatalog:
    """The custom tools a suite file can name (its ``tools_module`` and ``module:function``
    references), imported relative to the suite file's folder."""

    def __init__(self, folder: Path, tools_module: str | None = None) -> None:
        self.folder = folder
        self.tools_module = tools_module
        self.module_tools: dict[str, Tool] = {}
        self._refs: dict[str, Tool] = {}
        if tools_module is not None:
            self.module_tools = self._load_module(tools_module)

    def _load_module(self, rel: str) -> dict[str, Tool]:
        try:  # a NUL, a lone surrogate or a name past 255 bytes: tracebacks before (round 20 B)
            path = (self.folder / rel).resolve()
            regular = path.is_file()
        except (OSError, ValueError) as exc:
            said = getattr(exc, "strerror", None) or exc
            raise ConfigError(f"{rel!r} cannot name a file beside the suite ({said})") from None
        if not regular:
            with contextlib.suppress(OSError):  # there, but a FIFO would block the import
                kind = file_kind(path.stat().st_mode)
                raise ConfigError(f"{path} is {kind}, not a regular file; refused") from None
            raise ConfigError(f"{rel!r} was not found beside the suite (looked for {path})")
        if path.stat().st_size > MAX_INPUT_BYTES:  # read whole by the import: a sparse 3 GB
            raise ConfigError(  # file held 3.2 GB to fail (adversary round 21, part B)
                f"{path} is larger than {MAX_INPUT_BYTES:,} bytes; refused"
            )
        digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
        name = f"harness_suite_tools_{path.stem}_{digest}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ConfigError(f"{rel!r} cannot be imported as a Python module")
        module = importlib.util.module_from_spec(spec)
        try:
            with _folder_first(self.folder):
                sys.modules[name] = module
                spec.loader.exec_module(module)
        except Exception as exc:
            sys.modules.pop(name, None)
            raise ConfigError(f"importing {rel} failed: {type(exc).__name__}: {exc}") from None
        return self._tools_of(module, rel)

    @staticmethod
    def _tools_of(module: ModuleType, rel: str) -> dict[str, Tool]:
        found: dict[str, Tool] = {}
        for attr, value in vars(module).items():
            if attr.startswith("_") or isinstance(value, type) or not isinstance(value, Tool):
                continue
            made = _as_tool(value, f"{rel}: {attr}")
            if made.name in BUILTIN_TOOLS:
                raise ConfigError(
                    f"{rel}: tool {made.name!r} has the name of a builtin tool; rename it"
                )
            found[made.name] = made
        if not found:
            raise ConfigError(f"{rel} defines no tools; decorate functions with @harness.tool")
        return found

    def resolve(self, name: str) -> Tool | None:
        """The custom tool ``name`` stands for (None for a builtin name or ``all``); raises
        ConfigError saying what is wrong."""
        if name == "all" or name in BUILTIN_TOOLS:
            return None
        if name in self.module_tools:
            return self.module_tools[name]
        if is_tool_ref(name):
            if name not in self._refs:
                self._refs[name] = self._import_ref(name)
            return self._refs[name]
        if name in TOOLS:  # a plug-in tool, by its registered name
            return TOOLS.get(name)
        known = ", ".join(TOOLS.names())
        defined = (
            f"; {self.tools_module} defines: {', '.join(sorted(self.module_tools))}"
            if self.tools_module
            else "; name a tools_module file or use 'module:function' for custom tools"
        )
        raise ConfigError(f"unknown tool {name!r}; builtins: {known}{defined}")

    def _import_ref(self, ref: str) -> Tool:
        module_name, _, attr = ref.partition(":")
        if not module_name or not attr.isidentifier():
            raise ConfigError(f"{ref!r} must look like 'module:function'")
        try:
            with _folder_first(self.folder):
                module = importlib.import_module(module_name)
        except Exception as exc:
            problem = f"{type(exc).__name__}: {exc}"
            if isinstance(exc, ModuleNotFoundError) and exc.name:  # its file a FIFO: say so
                with _folder_first(self.folder):
                    found = module_file_problem(exc.name, sys.path)
                problem += f" ({found}; refused)" if found else ""
            raise ConfigError(f"cannot import {ref!r}: {problem}") from None
        if not hasattr(module, attr):
            raise ConfigError(f"cannot import {ref!r}: module {module_name!r} has no {attr!r}")
        made = _as_tool(getattr(module, attr), repr(ref))
        if made.name in BUILTIN_TOOLS:
            raise ConfigError(f"{ref!r} is a tool named {made.name!r}, a builtin name; rename it")
        return made

    def objects(self, names: list[str] | None) -> list[Tool | str] | None:
        """``names`` with every custom name replaced by its tool object."""
        if names is None:
            return None
        return [self.resolve(n) or n for n in names]


def added_tool_clash(task: Any, tools: list[str], catalog: ToolCatalog) -> tuple[str, str] | None:
    """(field, problem) when one of ``task``'s follow-up turns adds a tool the run already has
    (from ``tools``, ``all`` for every builtin, or an earlier ``add_tools``), which the run
    refuses (adversary round 8: ``suites validate`` passed it, ``run`` made error cells,
    ``suites audit`` crashed); None when every added tool is new."""
    if (getattr(task, "__pydantic_private__", None) or {}).get("_tool_factory") is not None:
        return None

    def names(name: str) -> set[str]:
        if name == "all":
            return set(BUILTIN_TOOLS)
        try:
            found = catalog.resolve(name)
        except ConfigError:
            return set()  # reported where it is named
        return {str(found.name)} if found is not None else {name}

    seen: set[str] = set().union(*(names(n) for n in tools)) if tools else set()
    for i, turn in enumerate(task.turns or ()):
        for j, name in enumerate(() if isinstance(turn, str) else turn.add_tools):
            for added in sorted(names(name)):
                if added in seen:
                    return f"turns.{i}.add_tools.{j}", (
                        f"tool {added!r} is already among the task's tools (its tools: or "
                        "an earlier turn's add_tools); add each tool once"
                    )
                seen.add(added)
    return None
