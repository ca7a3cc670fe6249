"""A task's workspace files were checked for a file that another needs as a folder by slicing
and hashing every prefix of each path anew: quadratic in a path's depth (adversary round 22,
part B): 100 files 20,000 folders deep (a 4 MB suite) took 3 minutes to validate, at every
`suites validate` and `harness run`. Fails on 0624268 by its limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import ConfigError
from harness.suites._load import load_suite
from harness.suites._workspace_files import workspace_clash

DEEP = "a/" * 20_000


def _suite(tmp_path: Path, names: list[str]) -> Path:
    files = "".join(f"        ? {name}\n        : hi\n" for name in names)
    path = tmp_path / "s.yaml"
    path.write_text(
        "suite: ws\ntasks:\n  - id: t1\n    prompt: x\n    expect: {kind: contains, value: x}\n"
        f"    workspace:\n      files:\n{files}",
        encoding="utf-8",
    )
    return path


@pytest.mark.timeout(60)
def test_deep_workspace_files_are_checked_in_linear_time(tmp_path: Path) -> None:
    suite = load_suite(_suite(tmp_path, [f"{DEEP}f{i}" for i in range(100)]))
    assert len(suite.tasks[0].workspace.files) == 100


@pytest.mark.timeout(60)
def test_a_deep_file_that_another_needs_as_a_folder_is_still_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="to be a folder, but it is a file here too"):
        load_suite(_suite(tmp_path, [f"{DEEP}f1", f"{DEEP}f0", f"{DEEP}f0/g"]))
    assert workspace_clash(["a/b", "a"]) == (
        "a/b",
        "'a/b' needs 'a' to be a folder, but it is a file here too",
    )
    assert workspace_clash(["x/./y", "x/y"]) == ("x/y", "'x/y' names the same file as 'x/./y'")
    assert workspace_clash(["a/b/c", "a/b/d", "a/e"]) is None
