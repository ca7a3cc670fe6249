"""A full disk, injected: Python loads this module at start-up when its folder is on
``PYTHONPATH`` (tests/e2e/disk_full_driver.py, ``inject``). While the file
``$HARNESS_TEST_DISK_FULL_FLAG`` exists, every write from Python to a file under
``$HARNESS_TEST_DISK_FULL_ROOT`` (files opened with ``open``/``Path.open``, and ``os.write``)
fails as on a full disk (a descriptor opened with ``os.open`` and wrapped by ``os.fdopen`` too):
the first write of each file is cut short (half of it goes out, as
when the last blocks run out), then ENOSPC. DuckDB's own writes (C++) are not touched: the real
full disk of the same test (a small tmpfs) covers those where it can be made.
"""

from __future__ import annotations

import builtins
import errno
import io
import os
from typing import Any

FLAG = os.environ.get("HARNESS_TEST_DISK_FULL_FLAG", "")
ROOT = os.environ.get("HARNESS_TEST_DISK_FULL_ROOT", "")

_open = io.open
_write = os.write
_cut_fds: set[int] = set()


def _full() -> bool:
    return bool(FLAG) and os.path.exists(FLAG)


def _under_root(path: str) -> bool:
    return bool(ROOT) and os.path.abspath(path).startswith(ROOT.rstrip(os.sep) + os.sep)


def _enospc() -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


class FullDiskFile:
    """A file object whose writes fail while the disk is "full"."""

    def __init__(self, f: Any) -> None:
        self._f = f
        self._cut = False

    def write(self, data: Any) -> int:
        if not _full():
            self._cut = False
            return int(self._f.write(data))
        if self._cut or len(data) < 2:
            raise _enospc()
        self._cut = True
        half = len(data) // 2
        n = int(self._f.write(data[:half]))
        if isinstance(self._f, io.RawIOBase):
            return n  # a raw file: a short write, the next one fails
        self._f.flush()
        raise _enospc()

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._f, name)

    def __enter__(self) -> FullDiskFile:
        self._f.__enter__()
        return self

    def __exit__(self, *exc: object) -> Any:
        return self._f.__exit__(*exc)

    def __iter__(self) -> Any:
        return iter(self._f)


def full_disk_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
    f = _open(file, mode, *args, **kwargs)
    if not any(c in mode for c in "wax+"):
        return f
    if isinstance(file, int):  # os.fdopen of a descriptor opened with O_NOFOLLOW, say
        try:
            path = os.readlink(f"/proc/self/fd/{file}")
        except OSError:
            return f
    else:
        path = os.fspath(file)
    if _under_root(path):
        return FullDiskFile(f)
    return f


def full_disk_write(fd: int, data: Any) -> int:
    if _full():
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            target = ""
        if _under_root(target):
            if fd in _cut_fds or len(data) < 2:
                raise _enospc()
            _cut_fds.add(fd)
            return _write(fd, bytes(data)[: len(data) // 2])
    _cut_fds.discard(fd)
    return _write(fd, data)


if FLAG and ROOT:
    io.open = full_disk_open
    builtins.open = full_disk_open
    os.write = full_disk_write
