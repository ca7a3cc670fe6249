"""``harness.telemetry`` imports its public names lazily (they load OpenTelemetry, which
``import harness`` must not). Its one table, ``_EXPORTS``, gives ``__all__`` and the lazy map;
the ``TYPE_CHECKING`` imports that type checkers read must name the same, from the same
modules."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import harness.telemetry as telemetry


def type_checking_imports(source: str) -> tuple[dict[str, str], list[str]]:
    """The re-exports (``from M import X as X``) of the module's ``if TYPE_CHECKING:`` block as
    {name: module}, and its other imports of ``harness.telemetry`` names."""
    reexports: dict[str, str] = {}
    others: list[str] = []
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"):
            continue
        for stmt in node.body:
            assert isinstance(stmt, ast.ImportFrom), ast.unparse(stmt)
            for alias in stmt.names:
                if alias.asname == alias.name:
                    reexports[alias.name] = stmt.module or ""
                elif (stmt.module or "").startswith("harness.telemetry"):
                    others.append(alias.name)
    return reexports, others


def test_type_checking_imports_all_and_the_lazy_map_agree() -> None:
    reexports, others = type_checking_imports(Path(telemetry.__file__).read_text())
    assert others == []  # every telemetry name imported for type checkers is re-exported
    assert reexports == telemetry._LAZY
    assert sorted(telemetry.__all__) == telemetry.__all__
    assert set(telemetry.__all__) == {*telemetry._EAGER, *reexports}
    assert len(telemetry.__all__) == len(telemetry._EAGER) + len(reexports)  # no name twice


def test_every_public_name_resolves_from_its_module() -> None:
    for name in telemetry._EAGER:
        assert name in vars(telemetry)
    for name, module in telemetry._LAZY.items():
        assert name not in vars(telemetry)  # lazy: not bound at import
        assert getattr(telemetry, name) is getattr(importlib.import_module(module), name)


def test_the_check_reads_the_type_checking_block() -> None:
    source = (
        "if TYPE_CHECKING:\n"
        "    from harness.kernel._state import State\n"
        "    from harness.telemetry._setup import TracingHandle as TracingHandle\n"
        "    from harness.telemetry._show import show_traces\n"
    )
    assert type_checking_imports(source) == (
        {"TracingHandle": "harness.telemetry._setup"},
        ["show_traces"],
    )
