"""``harness.report`` keeps one name list: what it imports is exactly its ``__all__`` (no lazy
map or TYPE_CHECKING block that could drift from it)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import harness.report

SOURCE = Path(harness.report.__file__)


def _tree() -> ast.Module:
    return ast.parse(SOURCE.read_text(encoding="utf-8"))


def test_the_imported_names_are_exactly_all() -> None:
    imported = {
        alias.asname or alias.name
        for node in _tree().body
        if isinstance(node, ast.ImportFrom) and node.module != "__future__"
        for alias in node.names
    }
    assert imported == set(harness.report.__all__)
    assert harness.report.__all__ == sorted(set(harness.report.__all__))


def test_nothing_is_lazy_or_type_checking_only() -> None:
    tree = _tree()
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert not functions & {"__getattr__", "__dir__"}
    assert not [n for n in tree.body if isinstance(n, ast.If)]  # no `if TYPE_CHECKING:` block


def test_every_name_is_the_object_of_its_home_module() -> None:
    for node in _tree().body:
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            home = importlib.import_module(node.module or "")
            for alias in node.names:
                assert getattr(harness.report, alias.name) is getattr(home, alias.name)
