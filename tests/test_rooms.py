"""Inside a package, modules import each other one way, and a class is whole (issue 36, item 3).

``tests/test_layers.py`` refuses cycles of imports that run; here imports under
``if TYPE_CHECKING:`` count too: a module that names another's class in a hint while that module
imports it back is one job split in two (or two jobs tangled), whatever runs at import time.
And no class is assembled from several harness classes (mixins that declare each other's
attributes and stub each other's methods): a class with several jobs holds one object per job.
"""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from pathlib import Path

import pytest

from tests.graphs import first_cycle

ROOT = Path(__file__).resolve().parents[1] / "harness"

#: Packages whose modules still import each other in a circle, with what is known of it.
#: Remove an entry when its circle is gone (the test then covers the package).
#: Packages exempt from the circle check, and why: none (the kernel's, report's and suites'
#: circles were broken with the option groups).
KNOWN_CIRCLES: dict[str, str] = {}


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _exists(module: str) -> bool:
    base = ROOT.parent.joinpath(*module.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


@functools.cache
def _parsed() -> dict[Path, ast.Module]:
    """Every module of harness, parsed once per session."""
    return {p: ast.parse(p.read_text(encoding="utf-8")) for p in sorted(ROOT.rglob("*.py"))}


def _imports(tree: ast.Module, module: str, *, is_init: bool = False) -> set[str]:
    """Every harness module that ``tree`` (module ``module``) imports, at any depth,
    ``TYPE_CHECKING`` ones included."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[: None if is_init else -1]
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if _exists(sub) else target)
    return {m for m in found if m.startswith("harness.")}


def _package_graph(package: str) -> dict[str, set[str]]:
    """The imports between the modules of one package (its ``__init__`` left out: a package's
    lazy table imports its modules on first use, never at import)."""
    prefix = f"harness.{package}."
    graph: dict[str, set[str]] = defaultdict(set)
    for path, tree in _parsed().items():
        if path.name == "__init__.py" or not path.is_relative_to(ROOT / package):
            continue
        src = _module(path)
        found = _imports(tree, src)
        graph[src] |= {m for m in found if m.startswith(prefix) and m != src}
    return graph


PACKAGES = sorted(
    p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file() and p.name not in KNOWN_CIRCLES
)


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_circle_inside_a_package(package: str) -> None:
    cycle = first_cycle(_package_graph(package))
    assert cycle is None, f"harness/{package}: " + " -> ".join(cycle or [])


def test_the_circle_check_sees_type_checking_imports() -> None:
    """A hint-only import closes a circle as well as one that runs."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "from harness.cassettes._scrubparts import cut\n"
        "if TYPE_CHECKING:\n"
        "    from ._secrets import Redactor\n"
        "def f():\n"
        "    from harness.store import _rows\n"
    )
    found = _imports(ast.parse(source), "harness.cassettes._logscrub")
    assert found == {
        "harness.cassettes._scrubparts",
        "harness.cassettes._secrets",
        "harness.store._rows",
    }
    assert first_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert first_cycle({"a": {"b"}, "b": set()}) is None


def _harness_classes() -> dict[str, set[str]]:
    """Each class defined in harness (by name) -> the names of its bases."""
    classes: dict[str, set[str]] = {}
    for path, tree in _parsed().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases = {ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases}
                classes[f"{_module(path)}.{node.name}"] = bases
    return classes


#: Classes that may have several harness bases, and why.
DECLARATIONS = {
    # The option groups (SetupOptions, LimitOptions, ...) declare fields and their validators
    # only, each option once; RunConfig is their union, read flat (config.max_iterations).
    "harness.kernel._options.RunConfig",
}


def test_no_class_is_assembled_from_harness_classes() -> None:
    """At most one base class of a harness class is a harness class: no mixins."""
    classes = _harness_classes()
    names = {qual.rsplit(".", 1)[-1] for qual in classes}
    mixed = {
        qual: sorted(own)
        for qual, bases in classes.items()
        if len(own := bases & names) > 1 and qual not in DECLARATIONS
    }
    assert mixed == {}, f"hold one object per job instead: {mixed}"


def test_store_and_run_tracer_hold_their_parts() -> None:
    """Store and RunTracer delegate to parts with one job each (issue 36)."""
    pytest.importorskip("duckdb")
    from harness.store import Store
    from harness.telemetry import RunTracer

    assert [c.__name__ for c in Store.__mro__] == ["Store", "object"]
    assert [c.__name__ for c in RunTracer.__mro__] == ["RunTracer", "object"]


#: The longest a function of harness may be (issue 36: `run_cmd` had 111 lines, `_loop` 102).
MAX_FUNCTION_LINES = 100


def _long_functions(tree: ast.Module, limit: int) -> list[tuple[str, int]]:
    """(name, lines) of every function or method in ``tree`` longer than ``limit`` lines, from
    its ``def`` to its last line (decorators, such as a command's click options, not counted)."""
    return [
        (node.name, node.end_lineno - node.lineno + 1)
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > limit
    ]


def test_the_long_function_finder_counts_from_def_to_the_last_line() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(5))
    tree = ast.parse(
        f"@staticmethod\ndef f():\n{body}\n\nclass C:\n    def g(self):\n        pass\n"
    )
    assert _long_functions(tree, 5) == [("f", 6)]
    assert _long_functions(tree, 6) == []


def test_no_function_is_longer_than_100_lines() -> None:
    found = [
        f"{path.relative_to(ROOT.parent)}: {name} ({lines} lines)"
        for path, tree in _parsed().items()
        for name, lines in _long_functions(tree, MAX_FUNCTION_LINES)
    ]
    assert not found, "split these by job:\n" + "\n".join(found)
