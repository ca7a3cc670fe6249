"""``list_dir`` of a folder with very many entries (adversary round 12 part A, issue 34 item 8).
A ``shell`` command may add 10,000 entries, so six of them make 60,000; ``list_dir`` then
returned every name: a 3.2 MB result for the model, where ``read_file``, ``grep`` and ``glob``
cap theirs. Now it shows the first :data:`MAX_LISTED` names (sorted) and says how many more
there are; a folder within the cap is listed as before."""

from __future__ import annotations

from pathlib import Path

from harness.tools._base import ToolContext
from harness.tools._builtins import ListDirTool
from harness.tools._workspace import Workspace


async def test_a_folder_past_the_cap_is_listed_up_to_it(tmp_path: Path) -> None:
    from harness.tools._file_tools import MAX_LISTED

    for i in range(MAX_LISTED + 500):
        (tmp_path / f"f{i:05d}").touch()
    out = await ListDirTool().run({}, ToolContext(Workspace(tmp_path), "s"))
    lines = out.split("\n")
    assert len(lines) == MAX_LISTED + 1
    assert lines[:2] == ["f00000", "f00001"]
    assert lines[-1] == f"[capped at {MAX_LISTED:,} entries; 500 more not shown; narrow with glob]"


async def test_a_folder_within_the_cap_is_listed_whole(tmp_path: Path) -> None:
    for name in ("b", "a"):
        (tmp_path / name).touch()
    (tmp_path / "d").mkdir()
    out = await ListDirTool().run({}, ToolContext(Workspace(tmp_path), "s"))
    assert out == "a\nb\nd/"
