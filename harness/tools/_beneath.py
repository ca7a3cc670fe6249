"""Open files inside the workspace without ever following a link the kernel resolves for us.

A path checked with ``realpath`` and then opened by name can be swapped for a symlink between the
check and the open (another agent's ``shell`` can do it in a loop). Here nothing is opened by a
path from the host's root: every lookup starts at a descriptor of the workspace directory and
goes one component at a time with ``O_NOFOLLOW`` (a symlink fails the open instead of being
followed). When a component is a symlink, its text is read with ``readlinkat`` and interpreted
here, confined: a relative target continues the walk from the directory holding the link (its
``..`` components pop the walk's own stack of directory descriptors and can never go above the
workspace), an absolute target is allowed only when it names a place inside the workspace, and
anything else is refused. Where the kernel has ``openat2`` (Linux 5.6+), the directory part of a
path without links is opened in one call with ``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`` and only
a path with a link takes the slow walk.

Files are opened with ``O_NONBLOCK`` and checked with ``fstat`` (a FIFO, socket or device is
refused without blocking); writes go to a fresh temporary file in the same directory descriptor
and are renamed over the name, so a write never goes into an inode that was swapped in.
"""

from __future__ import annotations

import ctypes
import errno
import os
import secrets
import stat
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any

from harness.errors import ToolError

__all__ = ["MAX_LINK_HOPS", "Beneath", "Spot", "openat2_available", "read_fd"]

#: Symlinks followed in one lookup before it is refused (the kernel's own limit is 40).
MAX_LINK_HOPS = 40
_RETRIES = 16  # a name swapped under us between lstat and open: look it up again
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY

# openat2(2): struct open_how and the RESOLVE_* flags from linux/openat2.h.
_SYS_OPENAT2 = 437  # the same number on every architecture (the unified syscall table)
_RESOLVE = 0x02 | 0x04 | 0x08  # RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


_syscall: Any = None
if sys.platform == "linux":
    try:
        _syscall = ctypes.CDLL(None, use_errno=True).syscall
        _syscall.restype = ctypes.c_long
    except (OSError, AttributeError):
        _syscall = None


def _openat2(dir_fd: int, path: str, flags: int) -> int:
    """openat2(dir_fd, path, {flags, 0, RESOLVE_BENEATH|NO_SYMLINKS|NO_MAGICLINKS}); OSError on
    failure (ENOSYS when the kernel has no openat2)."""
    global _syscall
    if _syscall is None:
        raise OSError(errno.ENOSYS, "openat2 unavailable")
    how = _OpenHow(flags, 0, _RESOLVE)
    fd = int(
        _syscall(
            ctypes.c_long(_SYS_OPENAT2),
            ctypes.c_int(dir_fd),
            ctypes.c_char_p(os.fsencode(path)),
            ctypes.byref(how),
            ctypes.c_size_t(ctypes.sizeof(how)),
        )
    )
    if fd < 0:
        err = ctypes.get_errno()
        if err in (errno.ENOSYS, errno.EPERM):  # no openat2, or a seccomp filter refusing it
            _syscall = None
        raise OSError(err, os.strerror(err))
    return fd


def openat2_available() -> bool:
    """Whether lookups use the kernel's ``openat2`` for paths without links."""
    if _syscall is None:
        return False
    try:
        os.close(_openat2(-100, ".", _DIR_FLAGS))  # AT_FDCWD
    except OSError:
        return _syscall is not None
    return True


@dataclass(slots=True)
class Spot:
    """A name in a directory of the workspace: ``dir_fd`` (owned, closed by :meth:`close`),
    ``name`` (never a symlink when looked up; None for the workspace root itself), ``lstat``
    (None when nothing has that name yet) and ``parts``, its real path's components."""

    dir_fd: int
    name: str | None
    lstat: os.stat_result | None
    parts: tuple[str, ...]

    @property
    def rel(self) -> str:
        return "/".join(self.parts) or "."

    def close(self) -> None:
        if self.dir_fd >= 0:
            os.close(self.dir_fd)
            self.dir_fd = -1


class Beneath:
    """Lookups confined to the directory ``root`` (an absolute, real path), or to ``base`` below
    it: real directory names (a sub-agent's folder), opened one by one from a descriptor of
    ``root`` with ``O_NOFOLLOW`` at every lookup, so a name on the way swapped for a symlink
    refuses the lookup instead of leading elsewhere. ``aliases`` are other absolute spellings of
    the confining directory, for absolute symlink targets."""

    __slots__ = ("_aliases", "_base", "_root", "shown")

    def __init__(
        self, root: str, aliases: Sequence[str] = (), shown: str = "", base: Sequence[str] = ()
    ) -> None:
        self._root = root
        self._base = tuple(base)
        top = os.path.join(root, *self._base)
        self._aliases = tuple(dict.fromkeys([top, *aliases]))
        self.shown = shown  # the path the model gave, for messages

    # --- lookups ---------------------------------------------------------------------------

    def _root_fd(self, prefix: str | None = None) -> int:
        fd = os.open(self._root, _DIR_FLAGS)
        for i, name in enumerate(self._base):
            try:
                nxt = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                os.close(fd)
                if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT):
                    folder = "/".join(self._base[: i + 1])
                    raise ToolError(
                        f"{prefix or f'path refused: {self.shown!r}'}: the workspace folder "
                        f"{folder!r} was removed or replaced (by a symlink or a file) since this "
                        "agent started in it"
                    ) from None
                raise
            os.close(fd)
            fd = nxt
        return fd

    def folder(self, prefix: str) -> int:
        """The confining folder itself, opened (``O_DIRECTORY``) by the lookup every other goes
        through, and checked to lie under ``root`` (its ``/proc/self/fd`` link); ``prefix``
        starts the ToolError when it was removed or replaced."""
        fd = self._root_fd(prefix)
        try:
            real = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            real = None  # no /proc: the lookup's own guarantee stands alone
        if (
            real is not None
            and real != self._root
            and not real.startswith(self._root.rstrip("/") + "/")
        ):
            os.close(fd)
            raise ToolError(
                f"{prefix}: the workspace folder is now {real!r}, outside the workspace"
            )
        return fd

    def _escape(self) -> ToolError:
        return ToolError(f"path refused: {self.shown!r} resolves outside the workspace (symlink)")

    def _absolute(self, target: str) -> list[str]:
        norm = os.path.normpath(target)
        for base in self._aliases:
            if norm == base:
                return []
            if norm.startswith(base.rstrip("/") + "/"):
                return norm[len(base.rstrip("/")) + 1 :].split("/")
        raise self._escape()

    def _fast(self, parts: Sequence[str]) -> tuple[int, tuple[str, ...]] | None:
        """The directory ``parts`` opened with one openat2 call, or None (a link, or no
        openat2): then the walk does it."""
        if _syscall is None or ".." in parts:
            return None
        root = self._root_fd()
        try:
            return _openat2(root, "/".join(parts) or ".", _DIR_FLAGS), tuple(parts)
        except OSError as exc:
            if exc.errno == errno.ENOENT:
                raise
            return None  # a link (ELOOP, ENOTDIR), EXDEV, EAGAIN, ENOSYS: the walk decides
        finally:
            os.close(root)

    def _walk(self, parts: Sequence[str], *, create: bool) -> tuple[int, tuple[str, ...]]:
        """The directory ``parts`` (following symlinks only while they stay inside)."""
        stack: list[tuple[int, str]] = [(self._root_fd(), "")]
        todo = [p for p in reversed(parts) if p not in ("", ".")]
        hops = 0
        made = 0  # folders made again in a row: each new folder counted was a hop, so a
        done = False  # path 41 folders deep was "No such file or directory" (round 22 B)
        try:
            while todo:
                name = todo.pop()
                if name in ("", "."):
                    continue
                if name == "..":
                    if len(stack) == 1:
                        raise self._escape()
                    os.close(stack.pop()[0])
                    continue
                dfd = stack[-1][0]
                try:
                    fd = os.open(name, _DIR_FLAGS, dir_fd=dfd)
                except FileNotFoundError:
                    if not create:
                        raise
                    made += 1  # bounds a loop of mkdir and removal by someone else
                    if made > MAX_LINK_HOPS:
                        raise
                    with suppress(FileExistsError):
                        os.mkdir(name, 0o777, dir_fd=dfd)
                    todo.append(name)
                    continue
                except OSError as exc:
                    if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                        raise
                    hops = self._follow(stack, name, todo, hops)
                    continue
                stack.append((fd, name))
                made = 0
            done = True
            return stack[-1][0], tuple(n for _, n in stack[1:])
        finally:
            for fd, _ in stack if not done else stack[:-1]:
                os.close(fd)

    def _follow(self, stack: list[tuple[int, str]], name: str, todo: list[str], hops: int) -> int:
        """Push the target of the symlink ``name`` (in the directory on top of ``stack``) onto
        ``todo``; raise NotADirectoryError when ``name`` is not a link."""
        hops += 1
        if hops > MAX_LINK_HOPS:
            raise ToolError(f"path refused: {self.shown!r}: too many levels of symlinks")
        try:
            target = os.readlink(name, dir_fd=stack[-1][0])
        except OSError as exc:
            if exc.errno == errno.EINVAL:  # not a link (any more): look at it again
                st = os.stat(name, dir_fd=stack[-1][0], follow_symlinks=False)
                if not (stat.S_ISDIR(st.st_mode) or stat.S_ISLNK(st.st_mode)):  # a link again
                    raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR)) from None
                todo.append(name)
                return hops
            raise
        if os.path.isabs(target):
            new = self._absolute(target)
            while len(stack) > 1:
                os.close(stack.pop()[0])
        else:
            new = target.split("/")
        todo.extend(reversed([p for p in new if p not in ("", ".")]))
        return hops

    def directory(self, parts: Sequence[str], *, create: bool = False) -> tuple[int, str]:
        """An open descriptor of the directory ``parts`` and its real relative path."""
        fast = None if create else self._fast(parts)
        fd, real = fast if fast is not None else self._walk(parts, create=create)
        return fd, "/".join(real) or "."

    def spot(self, parts: Sequence[str], *, create_parents: bool = False) -> Spot:
        """The final name of ``parts`` in its (open) directory, its symlinks followed inside."""
        parts = self._normal(parts)
        hops = 0
        while True:
            if not parts:
                return Spot(self._root_fd(), None, None, ())
            head, name = parts[:-1], parts[-1]
            fast = None if create_parents else self._fast(head)
            dfd, real = fast if fast is not None else self._walk(head, create=create_parents)
            try:
                lst = os.stat(name, dir_fd=dfd, follow_symlinks=False)
            except FileNotFoundError:
                return Spot(dfd, name, None, (*real, name))
            except BaseException:
                os.close(dfd)
                raise
            if not stat.S_ISLNK(lst.st_mode):
                return Spot(dfd, name, lst, (*real, name))
            try:
                hops += 1
                if hops > MAX_LINK_HOPS:
                    raise ToolError(f"path refused: {self.shown!r}: too many levels of symlinks")
                target = os.readlink(name, dir_fd=dfd)
            except OSError:
                continue  # not a link any more: look again
            finally:
                os.close(dfd)
            relative = [*real, *target.split("/")]
            parts = self._normal(self._absolute(target) if os.path.isabs(target) else relative)

    def _normal(self, parts: Sequence[str]) -> list[str]:
        """``parts`` with ``..`` applied lexically (they are all real directories already, or
        the target of a link); refused when it climbs above the workspace."""
        out: list[str] = []
        for p in parts:
            if p in ("", "."):
                continue
            if p == "..":
                if not out:
                    raise self._escape()
                out.pop()
            else:
                out.append(p)
        return out

    # --- file operations -------------------------------------------------------------------

    @contextmanager
    def opened(self, spot: Spot) -> Iterator[tuple[int, os.stat_result]]:
        """``spot`` opened for reading (non-blocking, never following a link): a regular file
        or a directory; anything else is refused before it is opened."""
        if spot.name is None:
            fd = os.open(".", _DIR_FLAGS, dir_fd=spot.dir_fd)
        else:
            lst = spot.lstat
            if lst is None:
                raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT))
            if not (stat.S_ISREG(lst.st_mode) or stat.S_ISDIR(lst.st_mode)):
                raise ToolError(f"{spot.rel} is not a regular file ({_kind(lst.st_mode)})")
            try:
                fd = os.open(spot.name, _READ_FLAGS, dir_fd=spot.dir_fd)
            except OSError as exc:
                if exc.errno == errno.ELOOP:  # swapped for a link since the lookup
                    raise ToolError(f"{spot.rel} changed while it was opened (symlink)") from None
                raise
        try:
            st = os.fstat(fd)
            if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
                raise ToolError(f"{spot.rel} is not a regular file ({_kind(st.st_mode)})")
            yield fd, st
        finally:
            os.close(fd)

    def replace(self, spot: Spot, data: bytes) -> None:
        """Write ``data`` to a new file beside ``spot`` and rename it over ``spot``'s name (no
        existing inode is ever written into, a symlink swapped in is replaced, not followed)."""
        assert spot.name is not None
        mode = 0o666
        try:
            now = os.stat(spot.name, dir_fd=spot.dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            now = None
        if now is not None:
            if stat.S_ISDIR(now.st_mode):
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
            if stat.S_ISREG(now.st_mode):
                mode = stat.S_IMODE(now.st_mode)
            elif not stat.S_ISLNK(now.st_mode):
                raise ToolError(f"{spot.rel} is not a regular file ({_kind(now.st_mode)})")
        tmp = f".{_prefix(spot.name, 80)}.{secrets.token_hex(6)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(tmp, flags, mode, dir_fd=spot.dir_fd)
        try:
            try:
                if now is not None:
                    os.fchmod(fd, mode)
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            os.replace(tmp, spot.name, src_dir_fd=spot.dir_fd, dst_dir_fd=spot.dir_fd)
        except BaseException:
            with suppress(OSError):
                os.unlink(tmp, dir_fd=spot.dir_fd)
            raise


def read_fd(fd: int, limit: int) -> bytes:
    """At most ``limit`` bytes from ``fd``."""
    chunks: list[bytes] = []
    left = limit
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _prefix(name: str, limit: int) -> str:
    """The longest start of ``name`` of at most ``limit`` UTF-8 bytes, never splitting a
    character (a name may be 255 bytes: 60 emoji are 240, 60 characters but 240 bytes)."""
    size = 0
    for i, char in enumerate(name):
        size += len(char.encode("utf-8", "surrogatepass"))  # an escaped byte counts 3: a bound
        if size > limit:
            return name[:i]
    return name


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISLNK(mode):
        return "a symlink"
    return "a special file"
