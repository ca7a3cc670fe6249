"""Workspace confinement: every way out is refused, nothing outside is touched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.errors import ConfigError, HarnessError, ToolError
from harness.tools._workspace import Workspace


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("A")
    (ws / "sub").mkdir()
    (ws / "sub" / "b.txt").write_text("B")
    out = tmp_path / "outside"
    out.mkdir()
    (out / "secret.txt").write_text("SECRET")
    (ws / "link_out_dir").symlink_to(out, target_is_directory=True)
    (ws / "link_out_file").symlink_to(out / "secret.txt")
    (ws / "link_in_dir").symlink_to(ws / "sub", target_is_directory=True)
    (ws / "dangling_out").symlink_to(tmp_path / "outside" / "nope.txt")
    return ws


def test_relative_paths_resolve_inside(root: Path) -> None:
    ws = Workspace(root)
    real = root.resolve()
    assert ws.resolve("a.txt") == real / "a.txt"
    assert ws.resolve("sub/b.txt") == real / "sub" / "b.txt"
    assert ws.resolve(".") == real
    assert ws.resolve("sub/../a.txt") == real / "a.txt"
    assert ws.resolve("new/dir/file.txt") == real / "new" / "dir" / "file.txt"
    assert ws.relative(ws.resolve("sub/b.txt")) == "sub/b.txt"
    assert ws.relative(ws.resolve(".")) == "."


@pytest.mark.parametrize("path", ["../x", "..", "sub/../../x", "./../outside/secret.txt"])
def test_dotdot_escapes_are_refused(root: Path, path: str) -> None:
    with pytest.raises(ToolError, match="leaves the workspace"):
        Workspace(root).resolve(path)


@pytest.mark.parametrize("path", ["/etc/passwd", "/", "/tmp"])
def test_absolute_paths_outside_are_refused(root: Path, path: str) -> None:
    with pytest.raises(ToolError, match="absolute path outside the workspace"):
        Workspace(root).resolve(path)


def test_absolute_path_inside_is_allowed(root: Path) -> None:
    ws = Workspace(root)
    assert ws.resolve(str(root / "sub" / "b.txt")) == root.resolve() / "sub" / "b.txt"
    assert ws.resolve(str(root.resolve() / "a.txt")) == root.resolve() / "a.txt"
    with pytest.raises(ToolError):
        ws.resolve(str(root / ".." / "outside" / "secret.txt"))


def test_absolute_path_through_a_symlinked_root_is_allowed(root: Path, tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(root, target_is_directory=True)
    ws = Workspace(alias)
    assert ws.resolve(str(alias / "a.txt")) == root.resolve() / "a.txt"
    assert ws.resolve(str(root / "a.txt")) == root.resolve() / "a.txt"


@pytest.mark.parametrize(
    "path", ["link_out_dir", "link_out_dir/secret.txt", "link_out_file", "dangling_out"]
)
def test_symlinks_leading_outside_are_refused(root: Path, path: str) -> None:
    with pytest.raises(ToolError, match="symlink"):
        Workspace(root).resolve(path)


def test_symlink_staying_inside_is_allowed(root: Path) -> None:
    assert Workspace(root).resolve("link_in_dir/b.txt") == root.resolve() / "sub" / "b.txt"


@pytest.mark.parametrize("path", ["a\x00b", "\x00", "sub/\x00/../a.txt"])
def test_nul_bytes_are_refused(root: Path, path: str) -> None:
    with pytest.raises(ToolError, match="NUL"):
        Workspace(root).resolve(path)


@pytest.mark.parametrize("path", ["", None, 3, b"a.txt"])
def test_non_string_or_empty_paths_are_refused(root: Path, path: object) -> None:
    with pytest.raises(ToolError, match="non-empty string"):
        Workspace(root).resolve(path)  # type: ignore[arg-type]


def test_missing_root_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not an existing directory"):
        Workspace(tmp_path / "nope")
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError):
        Workspace(tmp_path / "file")


def test_temporary_workspace_is_lazy_seeded_and_cleaned_up() -> None:
    ws = Workspace(files={"a.txt": "hello", "d/e/f.txt": "deep"})
    states = [ws.created]
    root = ws.root
    states.append(ws.created)
    assert states == [False, True]
    assert (root / "a.txt").read_text() == "hello"
    assert (root / "d" / "e" / "f.txt").read_text() == "deep"
    ws.cleanup()
    assert not root.exists()
    assert not ws.created


def test_given_root_is_seeded_and_never_removed(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, files={"x/y.txt": "y"})
    assert (tmp_path / "x" / "y.txt").read_text() == "y"
    ws.cleanup()
    assert (tmp_path / "x" / "y.txt").exists()


def test_seed_files_cannot_escape(tmp_path: Path) -> None:
    ws_dir = tmp_path / "ws"
    ws_dir.mkdir()
    with pytest.raises(HarnessError):
        Workspace(ws_dir, files={"../evil.txt": "x"})
    assert not (tmp_path / "evil.txt").exists()
    assert os.listdir(tmp_path) == ["ws"]
