"""Folders nested 20,000 deep (adversary round 8, issue 34). Before: a model's ``shell``
command nesting folders 20,000 deep in its workspace made ``shutil.rmtree`` raise
``RecursionError`` when the run cleaned up: the cell was an error (``RecursionError: maximum
recursion depth exceeded``) and its workspace stayed on disk. Now folders are removed at any
depth (:func:`harness._files.remove_tree`), never following a link out."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from harness._files import remove_tree
from harness.cli import main


def _nest(root: Path, depth: int) -> None:
    top = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    here = top
    for i in range(depth):
        os.mkdir("d", dir_fd=here)
        if i % 1000 == 0:
            os.close(os.open("f", os.O_CREAT | os.O_WRONLY, dir_fd=here))
            os.symlink(str(root.parent / "outside"), "out", dir_fd=here)
        deeper = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=here)
        if here != top:
            os.close(here)
        here = deeper
    os.close(here)
    os.close(top)


@pytest.mark.slow  # 60,000 folder operations on disk: 17 s here when quiet, over 60 s at load
@pytest.mark.timeout(600)
def test_a_tree_20000_deep_is_removed_and_links_are_not_followed(tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "keep.txt").write_text("kept")
    root = tmp_path / "deep"
    root.mkdir()
    _nest(root, 20_000)
    (root / ".harness-flat-0").mkdir()  # the names it moves folders to may be taken
    (root / ".harness-flat-1").write_text("x")
    with pytest.raises(RecursionError):
        shutil.rmtree(root, ignore_errors=True)  # what the cleanup used before
    remove_tree(root)
    assert not root.exists()
    assert (tmp_path / "outside" / "keep.txt").read_text() == "kept"


DEEP = 'python3 -c \'import os\nfor i in range(20000):\n    os.mkdir("d"); os.chdir("d")\''


@pytest.mark.slow  # runs a sandboxed command
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="the shell tool needs bubblewrap")
@pytest.mark.timeout(600)
def test_a_command_nesting_folders_20000_deep_leaves_a_scored_cell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the workspaces are made here
    call = {"name": "shell", "arguments": {"command": DEEP}}
    task = {"id": "deep", "prompt": "go", "tools": ["shell", "finish"],
            "expect": {"kind": "tool_calls", "value": ["shell"]},
            "mock": {"turns": [{"tool_calls": [call]}, {"text": "done"}]}}  # fmt: skip
    (tmp_path / "deep.yaml").write_text(yaml.safe_dump({"suite": "deep", "tasks": [task]}))
    args = ["run", "deep.yaml", "--providers", "mock", "--modes", "react", "--db", "h.duckdb",
            "--no-progress"]  # fmt: skip
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 0, done.output
    assert "1 passed" in " ".join(done.output.split())
    left = [p for p in tmp_path.rglob("d") if p.is_dir()]
    assert not left, f"{len(left)} folders left"
