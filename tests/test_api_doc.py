"""docs/api.md is the public surface in one place: generated from every public module's
``__all__`` by scripts/api_reference.py, current, and each name on it used by a test or another
page."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "api.md"

#: Rendering imports every package (pandas, duckdb, OpenTelemetry, starlette): slow to start
#: on a loaded machine.
pytestmark = pytest.mark.timeout(300)


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "api_reference", ROOT / "scripts" / "api_reference.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_page_is_current() -> None:
    assert PAGE.read_text(encoding="utf-8") == _script().render(), (
        "run: python scripts/api_reference.py"
    )


def test_every_public_name_is_used_by_a_test_or_a_page() -> None:
    me = Path(__file__).resolve()
    tests = [p for p in (ROOT / "tests").rglob("*.py") if p.resolve() != me]
    texts = [p.read_text(encoding="utf-8") for p in tests]
    texts += [p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md") if p != PAGE]
    texts.append((ROOT / "README.md").read_text(encoding="utf-8"))
    corpus = "\n".join(texts)
    unused = {
        f"{module}.{name}"
        for module, names in _script().public_names().items()
        for name in names
        if not re.search(rf"\b{re.escape(name)}\b", corpus)
    }
    assert unused == set(), (
        "use each public name in a test or a page (docs/*.md, README.md), or take it off its "
        "module's __all__"
    )
