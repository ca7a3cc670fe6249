"""The run's workspace: a directory that file tools are confined to.

Paths given by the model are resolved relative to the workspace root. A path is refused (a
:class:`~harness.errors.ToolError`, which becomes an error result) when it contains a NUL byte, is
absolute and outside the root, or resolves outside the root through ``..`` or a symlink. Nothing
outside the root is read or written.

A sub-agent's ``subfolder`` is a workspace of its own made by :meth:`Workspace.subfolder`: pinned
by descriptor, never by name. Its lookups start at a descriptor of the outermost workspace and open
the folder's real names one by one without following links, so a sibling's shell that swaps the
folder for a symlink to the host (at spawn or later) makes the child's lookups fail; it never
roots the child outside.
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path

from harness._files import remove_tree
from harness.errors import ConfigError, ToolError
from harness.tools._beneath import Beneath

__all__ = ["Workspace"]

_CREATING = threading.Lock()


class Workspace:
    """A confined directory. Without ``root``, a fresh temporary directory made on first use
    (and removed by :meth:`cleanup`)."""

    __slots__ = ("_base", "_files", "_owned", "_real", "_root", "_top")

    def __init__(
        self, root: str | os.PathLike[str] | None = None, files: Mapping[str, str] | None = None
    ) -> None:
        self._files = dict(files or {})
        for rel in self._files:
            if (
                not isinstance(rel, str)
                or not rel
                or "\x00" in rel
                or os.path.isabs(rel)
                or ".." in Path(rel).parts
                or not Path(rel).parts  # "." names the workspace itself: an AssertionError
            ):
                raise ConfigError(
                    f"workspace files: {rel!r} must be a relative path inside the workspace"
                )
        self._owned = root is None
        self._root: Path | None = None
        self._real: Path | None = None
        self._top: str | None = None  # the real path opened by name (the outermost workspace)
        self._base: tuple[str, ...] = ()  # real names below it, opened by descriptor
        if root is not None:
            path = Path(root)
            if not path.is_dir():
                raise ConfigError(f"cwd: {str(path)!r} is not an existing directory")
            self._set_root(path)
            self._seed()

    def _set_root(self, path: Path) -> None:
        self._root = path
        self._real = path.resolve(strict=True)
        self._top = str(self._real)

    def _seed(self) -> None:
        assert self._root is not None
        self._seed_at(self._root)

    def _seed_at(self, root: Path) -> None:
        """Write the initial files under ``root`` (before it is published as :attr:`root`)."""
        assert self._real is not None
        for rel, content in self._files.items():
            beneath = Beneath(str(self._real), (os.path.abspath(root),), rel)
            try:
                spot = beneath.spot(self._split(rel, root), create_parents=True)
                try:
                    beneath.replace(spot, content.encode("utf-8", "replace"))
                finally:
                    spot.close()
            except ToolError as exc:  # e.g. a symlink already in a caller-given root
                raise ConfigError(f"workspace files: {exc}") from None
            except OSError as exc:
                raise ConfigError(f"workspace files: {rel!r}: {exc.strerror or exc}") from None
        self._files = {}

    @property
    def created(self) -> bool:
        return self._root is not None

    @property
    def root(self) -> Path:
        """The workspace directory (created on first access when temporary)."""
        if self._root is None:
            with _CREATING:  # file tools run in threads: two first calls must make one folder
                if self._root is None:
                    path = Path(tempfile.mkdtemp(prefix="harness-ws-"))
                    self._real = path.resolve(strict=True)
                    self._top = str(self._real)
                    self._seed_at(path)
                    self._root = path
        assert self._root is not None
        return self._root

    def parts(self, path: str) -> list[str]:
        """A model-given path as components relative to the workspace root (``..`` applied
        lexically), or ToolError: empty, a NUL byte, absolute outside, or leaving by ``..``.
        Symlinks are not looked at here: :meth:`beneath` follows them, confined."""
        if not isinstance(path, str) or path == "":
            raise ToolError("path must be a non-empty string")
        if "\x00" in path:
            raise ToolError("path refused: it contains a NUL byte")
        return self._split(path, self.root)

    def _split(self, path: str, root: Path) -> list[str]:
        real_root = self._real
        assert real_root is not None
        candidate = Path(path)
        if candidate.is_absolute():
            norm = Path(os.path.normpath(path))
            for base in (Path(os.path.abspath(root)), real_root):
                if norm == base or base in norm.parents:
                    candidate = norm.relative_to(base)
                    break
            else:
                raise ToolError(
                    f"path refused: {path!r} is an absolute path outside the workspace; "
                    "use a path relative to the workspace"
                )
        out: list[str] = []
        for part in candidate.as_posix().split("/"):
            if part in ("", "."):
                continue
            if part == "..":
                if not out:
                    raise ToolError(f"path refused: {path!r} leaves the workspace")
                out.pop()
            else:
                out.append(part)
        return out

    def beneath(self, shown: str = "") -> Beneath:
        """Lookups confined to this workspace (see :mod:`harness.tools._beneath`); ``shown`` is
        the path named in refusals."""
        root = self.root
        assert self._top is not None
        return Beneath(self._top, (os.path.abspath(root),), shown, base=self._base)

    def open_folder(self, prefix: str) -> int:
        """The workspace folder as an open descriptor (the caller closes it), for a tool that
        hands the folder to another process (the shell binds it into its sandbox): a
        sub-agent's folder is found by its real names from the outermost workspace's descriptor
        without following a link, so a name swapped for a symlink cannot put another folder in
        its place. ToolError (starting with ``prefix``) when it was removed or replaced."""
        return self.beneath().folder(prefix)

    def subfolder(self, path: str) -> Workspace:
        """The folder ``path`` of this workspace (made when missing) as a workspace of its own,
        for a sub-agent: never removed by it. The folder is looked up from a descriptor of this
        workspace (links followed only while they stay inside) and pinned by its real names,
        which every lookup of the child opens again from the outermost workspace's descriptor
        without following a link. ToolError when it leaves the workspace or is not a folder."""
        parts = self.parts(path)
        try:
            fd, real = self.beneath(path).directory(parts, create=True)
        except (NotADirectoryError, FileExistsError):
            raise ToolError(f"subfolder {path!r} is a file, not a folder") from None
        except OSError as exc:
            raise ToolError(f"subfolder {path!r}: {exc.strerror or exc}") from None
        os.close(fd)
        assert self._top is not None
        child = Workspace(None)
        child._owned = False
        child._top = self._top
        child._base = self._base + tuple(p for p in real.split("/") if p != ".")
        child._real = child._root = Path(self._top, *child._base)
        return child

    def resolve(self, path: str) -> Path:
        """Resolve a model-given path inside the workspace, or raise ToolError saying why not.

        A check by name, for callers that hand the path to something else (a sub-agent's
        folder); file tools open through :meth:`beneath` instead, which a symlink swapped in
        meanwhile cannot escape."""
        parts = self.parts(path)
        real_root = self._real
        assert real_root is not None
        real = Path(os.path.realpath(real_root.joinpath(*parts)))
        if not _within(real, real_root):
            raise ToolError(f"path refused: {path!r} resolves outside the workspace (symlink)")
        return real

    def relative(self, path: Path) -> str:
        """A path inside the workspace, shown relative to it (with forward slashes)."""
        for base in (self._real, self._root):
            if base is not None:
                try:
                    return path.relative_to(base).as_posix() or "."
                except ValueError:
                    pass
        raise ToolError(f"{str(path)!r} is not inside the workspace")

    def cleanup(self) -> None:
        """Remove a temporary workspace; a caller-given directory is left alone."""
        if self._owned and self._root is not None:
            remove_tree(self._root)
            self._root = None
            self._real = None
            self._top = None

    def shared(self) -> Workspace:
        """This workspace as a sub-agent sees it: the same directory, created on first use by
        either side (so a run that never touches files makes none), never removed by the
        borrower."""
        return _SharedWorkspace(self)


class _SharedWorkspace(Workspace):
    """A borrowed view of another run's workspace (see :meth:`Workspace.shared`)."""

    __slots__ = ("_owner",)

    def __init__(self, owner: Workspace) -> None:  # no super().__init__: it owns nothing
        self._owner = owner
        self._owned = False

    @property
    def created(self) -> bool:
        return self._owner.created

    @property
    def root(self) -> Path:
        return self._owner.root

    def resolve(self, path: str) -> Path:
        return self._owner.resolve(path)

    def parts(self, path: str) -> list[str]:
        return self._owner.parts(path)

    def beneath(self, shown: str = "") -> Beneath:
        return self._owner.beneath(shown)

    def subfolder(self, path: str) -> Workspace:
        return self._owner.subfolder(path)

    def relative(self, path: Path) -> str:
        return self._owner.relative(path)

    def cleanup(self) -> None:
        return None


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
