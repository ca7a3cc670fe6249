"""docs/extending.md: every Python block runs as written (a tool, a mode, a grader kind, a
provider, an executor, a task source, a suite)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "extending.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def test_the_page_has_one_example_per_extension_point() -> None:
    assert len(BLOCKS) == 7


@pytest.fixture(autouse=True)
def _registries_restored() -> Iterator[None]:
    """The examples register plug-ins in code: undo that after each, so that other tests see
    only the built-ins (and installed entry points)."""
    from harness.cli._plugins import registries

    saved = [(r, dict(r._entries)) for r in registries()]
    yield
    for registry, entries in saved:
        registry._entries.clear()
        registry._entries.update(entries)


@pytest.mark.parametrize(
    "source", BLOCKS, ids=["tool", "mode", "grader", "provider", "executor", "source", "suite"]
)
def test_example_runs(source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    # dont_inherit: the blocks run as a user runs them, without this file's __future__ imports.
    code = compile(source, str(DOC), "exec", dont_inherit=True)
    exec(code, {"__name__": "extending_example"})
