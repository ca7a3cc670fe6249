"""write_file and edit_file on a name near the file system's 255-byte limit: the temporary file
written beside it is named by a prefix cut at a byte count, never splitting a character."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from harness.tools._base import ToolContext
from harness.tools._beneath import _prefix
from harness.tools._builtins import EditFileTool, ReadFileTool, WriteFileTool
from harness.tools._workspace import Workspace


@pytest.mark.parametrize("name", ["😀" * 63, "a" + "😀" * 62 + "é"])
def test_write_and_edit_a_name_of_up_to_255_bytes(tmp_path: Path, name: str) -> None:
    assert len(os.fsencode(name)) <= 255
    ctx = ToolContext(Workspace(tmp_path), "names")

    async def calls() -> str:
        await WriteFileTool().run({"path": name, "content": "one\n"}, ctx)
        await EditFileTool().run({"path": name, "old": "one", "new": "two"}, ctx)
        return str(await ReadFileTool().run({"path": name}, ctx))

    assert "two" in asyncio.run(calls())
    assert (tmp_path / name).read_text() == "two\n"
    assert os.listdir(tmp_path) == [name]  # no temporary file left


def test_the_prefix_counts_bytes_and_keeps_characters_whole() -> None:
    assert _prefix("😀" * 60, 80) == "😀" * 20
    assert _prefix("a" + "😀" * 60, 80) == "a" + "😀" * 19  # 77 bytes: a 4-byte one would be 81
    assert _prefix("short", 80) == "short"
    assert _prefix("\udcff" * 30, 80) == "\udcff" * 26  # an undecodable byte counted as 3
