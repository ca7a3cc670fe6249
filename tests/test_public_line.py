"""The public line (issue 16): each sub-package's ``__all__`` is its public API, implementation
modules are ``_``-private, and the docs import nothing private.

- every name in a sub-package's ``__all__`` imports from the package;
- a lazy package's table (``_EXPORTS``), its ``__all__`` and its ``TYPE_CHECKING`` re-exports
  (what type checkers read) name the same things, and importing the package binds none of them;
- every un-prefixed module of a sub-package is in :data:`PUBLIC_MODULES`, with its reason
  (docs/architecture.md, "The public line", says the same);
- nothing outside harness/ in the docs (README.md, docs/) imports or names a ``_`` module.

Tests may import ``_`` modules; users should not need to.
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HARNESS = ROOT / "harness"

SUBPACKAGES = (
    "core",
    "kernel",
    "modes",
    "providers",
    "tools",
    "telemetry",
    "bench",
    "store",
    "report",
    "view",
    "cli",
)

#: The packages whose names import on first use, from one table (harness/_exports.py).
LAZY = ("core", "kernel", "modes", "providers", "tools", "bench")

#: Every un-prefixed module of a sub-package, and why users import it directly. Keep it short:
#: a new module is ``_``-private, and its public names go in the package's ``__all__``.
PUBLIC_MODULES = {
    "harness.kernel.terminations": "the design contract names harness.kernel.terminations."
    "category(reason), is_success, is_error and all(): their one public path",
}

DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
#: A dotted name with a private part below harness (``harness.kernel._loop``,
#: ``harness.store._writer.Store``): an import, a ``python -m`` or a name to use.
PRIVATE_NAME = re.compile(r"\bharness(?:\.[A-Za-z]\w*)*\._[a-z]\w*")
#: ``from harness.kernel import _loop``.
PRIVATE_FROM = re.compile(r"\bfrom\s+harness(?:\.\w+)*\s+import\s+\(?\s*_[a-z]")


def _modules() -> list[str]:
    names = []
    for path in sorted(HARNESS.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] in ("__init__", "__main__"):
            continue
        names.append(".".join(parts))
    return names


def _is_private(module: str) -> bool:
    return any(part.startswith("_") for part in module.split(".")[1:])


def type_checking_reexports(source: str) -> dict[str, str]:
    """The ``from M import X as X`` re-exports of a module's ``if TYPE_CHECKING:`` block."""
    found: dict[str, str] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom):
                    for alias in stmt.names:
                        if alias.asname == alias.name:
                            found[alias.name] = stmt.module or ""
    return found


@pytest.mark.parametrize("name", SUBPACKAGES)
def test_every_name_in_all_imports(name: str) -> None:
    package = importlib.import_module(f"harness.{name}")
    names = package.__all__
    assert names, f"harness.{name} has no public API"
    assert len(set(names)) == len(names), f"a name twice in harness.{name}.__all__"
    for attr in names:
        assert getattr(package, attr) is not None, f"harness.{name}.{attr}"


@pytest.mark.parametrize("name", LAZY)
def test_a_lazy_package_has_one_table(name: str) -> None:
    package = importlib.import_module(f"harness.{name}")
    table = {n: module for module, names in package._EXPORTS.items() for n in names}
    assert package.__all__ == sorted(table)
    source = (HARNESS / name / "__init__.py").read_text(encoding="utf-8")
    assert type_checking_reexports(source) == table
    for attr, module in table.items():
        assert module.startswith(f"harness.{name}._"), f"{attr} comes from a private module"
        assert getattr(package, attr) is getattr(importlib.import_module(module), attr)


@pytest.mark.slow
def test_importing_a_lazy_package_binds_nothing() -> None:
    code = (
        "import importlib, sys\n"
        f"for name in {LAZY!r}:\n"
        "    p = importlib.import_module('harness.' + name)\n"
        "    bound = [n for n in p.__all__ if n in vars(p)]\n"
        "    assert not bound, (name, bound)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_every_public_module_is_listed_with_a_reason() -> None:
    public = {m for m in _modules() if m.count(".") >= 2 and not _is_private(m)}
    assert public == set(PUBLIC_MODULES), (
        "a new module is _-private; list a public one in PUBLIC_MODULES with its reason"
    )
    for module, reason in PUBLIC_MODULES.items():
        assert reason.strip()
        assert importlib.import_module(module).__all__


def test_no_doc_imports_a_private_module() -> None:
    found = []
    for doc in DOCS:
        for lineno, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            for match in (*PRIVATE_NAME.finditer(line), *PRIVATE_FROM.finditer(line)):
                found.append(f"{doc.relative_to(ROOT)}:{lineno}: {match[0]}")
    assert found == [], "\n".join(found)


def test_the_doc_check_sees_private_names() -> None:
    assert PRIVATE_NAME.search("from harness.kernel._calls import call_provider")
    assert PRIVATE_NAME.search("python -m harness.grading._python_child serve")
    assert PRIVATE_FROM.search("from harness.cli import _run")
    assert PRIVATE_FROM.search("from harness.kernel import (\n    _calls,")
    assert not PRIVATE_NAME.search("from harness.kernel import call_provider")
    assert not PRIVATE_NAME.search("harness.run.finish_reason and harness/kernel/_loop.py")
    assert not PRIVATE_FROM.search("from harness.kernel import call_provider")
