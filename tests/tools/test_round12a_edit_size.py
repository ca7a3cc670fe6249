"""``edit_file`` with ``replace_all`` growing a file past the write limit (adversary round 12
part A, issue 34 item 8). Before: the new text was built whole and only then refused by the
write limit; 10 MB of ``a`` (within the limit) with a 1 KB replacement is a 10 GB string, made
on a worker thread (a ``MemoryError`` at best, the machine's memory at worst). Now the size is
computed from the count first and refused before anything is built."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from harness.errors import ToolError
from harness.tools._base import ToolContext
from harness.tools._builtins import EditFileTool
from harness.tools._workspace import Workspace


async def test_a_replacement_past_the_write_limit_is_refused_before_it_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARNESS_MAX_WRITE_BYTES", str(1_000_000))
    (tmp_path / "f.txt").write_text("a" * 1_000_000)  # 200 MB once each "a" is 200 characters
    ctx = ToolContext(Workspace(tmp_path), "s")
    args = {"path": "f.txt", "old": "a", "new": "b" * 200, "replace_all": True}
    tracemalloc.start()
    try:
        with pytest.raises(ToolError, match=r"would make f.txt 200,000,000 characters"):
            await EditFileTool().run(args, ctx)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 50_000_000, peak  # before: the 200 MB string was built
    assert (tmp_path / "f.txt").read_text() == "a" * 1_000_000


async def test_a_replacement_within_the_limit_is_made(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a-a-a")
    ctx = ToolContext(Workspace(tmp_path), "s")
    args = {"path": "f.txt", "old": "a", "new": "bb", "replace_all": True}
    out = await EditFileTool().run(args, ctx)
    assert out.content == "replaced 3 occurrences in f.txt"
    assert (tmp_path / "f.txt").read_text() == "bb-bb-bb"
