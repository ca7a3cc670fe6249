"""A sub-package's public names, imported from its private modules on first use.

A sub-package keeps one table, ``_EXPORTS`` (private module -> the names it exports), and derives
``__all__`` and a module ``__getattr__`` from it, so that importing the package loads nothing but
the table: ``import harness`` stays light, and no package import can start an import cycle. The
package repeats the names under ``if TYPE_CHECKING:`` (``X as X``) for type checkers, which cannot
read a computed ``__all__``; tests/test_public_api.py checks that the two lists agree and that
every name imports.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, table: Mapping[str, tuple[str, ...]]
) -> tuple[list[str], Callable[[str], Any]]:
    """``(__all__, __getattr__)`` for ``package`` from its table of exports."""
    where = {name: module for module, names in table.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    return sorted(where), __getattr__
