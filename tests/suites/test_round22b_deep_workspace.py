"""Workspace files deep in folders (adversary round 22, part B):

- the check for a file another needs as a folder sliced and hashed every prefix of each path
  anew: quadratic in a path's depth; 100 files 20,000 folders deep (a 4 MB suite) took 3
  minutes to validate;
- the workspace counted each folder it made as a symbolic link's hop (at most 40): a file 41
  folders deep passed `suites validate` and made every cell of its task an error cell, "No
  such file or directory" (the model's `write_file` the same); 20,000 deep, "Too many open
  files" (the walk holds each folder open): now at most 200 deep, refused at validate.

Each test fails on 0624268 (the first by its limit)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.suites._workspace_files import workspace_clash
from tests.e2e.edited_store import said

DEEP = "a/" * 20_000


def _suite(tmp_path: Path, names: list[str]) -> Path:
    files = "".join(f"        ? {name}\n        : hi\n" for name in names)
    path = tmp_path / "s.yaml"
    path.write_text(
        "suite: ws\ntasks:\n  - id: t1\n    prompt: x\n    expect: {kind: contains, value: x}\n"
        "    mock:\n      turns:\n        - text: x\n"
        f"    workspace:\n      files:\n{files}",
        encoding="utf-8",
    )
    return path


@pytest.mark.timeout(60)
def test_deep_workspace_files_are_checked_in_linear_time() -> None:
    assert workspace_clash([f"{DEEP}f{i}" for i in range(100)]) is None
    clash = workspace_clash([f"{DEEP}f1", f"{DEEP}f0", f"{DEEP}f0/g"])
    assert clash is not None
    assert clash[1].endswith("/f0' to be a folder, but it is a file here too")


def test_the_same_clashes_are_found() -> None:
    assert workspace_clash(["a/b", "a"]) == (
        "a/b",
        "'a/b' needs 'a' to be a folder, but it is a file here too",
    )
    assert workspace_clash(["x/./y", "x/y"]) == ("x/y", "'x/y' names the same file as 'x/./y'")
    assert workspace_clash(["a/b/c", "a/b/d", "a/e"]) is None


@pytest.mark.timeout(120)
def test_a_file_150_folders_deep_is_made(tmp_path: Path) -> None:
    suite = _suite(tmp_path, ["a/" * 150 + "f"])
    out = said(["run", str(suite), "--providers", "mock", "--modes", "react", "--no-progress",
                "--db", str(tmp_path / "h.duckdb")], 0)  # fmt: skip
    assert "1/1 cells, 1 passed" in out


def test_a_file_too_deep_to_make_is_refused_at_validate(tmp_path: Path) -> None:
    out = said(["suites", "validate", str(_suite(tmp_path, ["a/" * 201 + "f"]))], 2)
    assert "is 201 folders deep; a workspace file is at most 200 deep" in out
