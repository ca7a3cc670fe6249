"""inotify(7) on the workspace's folders: what wakes the sandbox's watchdog when the workspace
changes, and how many entries a batch of events made (for the file-count cap)."""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import struct
from typing import Any

__all__ = ["Changes"]

# inotify(7): what wakes the watchdog when the workspace changes.
_IN_MODIFY, _IN_MOVED_TO, _IN_CREATE = 0x2, 0x80, 0x100
_IN_ONLYDIR, _IN_DONT_FOLLOW = 0x01000000, 0x02000000
_IN_NONBLOCK, _IN_CLOEXEC = 0o4000, 0o2000000
_MASK = _IN_MODIFY | _IN_MOVED_TO | _IN_CREATE | _IN_ONLYDIR | _IN_DONT_FOLLOW


@functools.cache
def _libc() -> Any:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    except (OSError, AttributeError):
        return None
    return libc


def _watchable(path: str) -> str:
    """``path`` as inotify may watch it without following links: the workspace given as
    ``/proc/self/fd/N`` (a link to the held folder) is watched as ``/proc/self/fd/N/.``."""
    return path + "/." if path.startswith("/proc/self/fd/") and path.count("/") == 4 else path


_EVENT = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len (then the name)


def _entries_made(chunk: bytes) -> int:
    """The events in ``chunk`` that made an entry (``IN_CREATE``, ``IN_MOVED_TO``)."""
    made = offset = 0
    while offset + _EVENT.size <= len(chunk):
        _, mask, _, length = _EVENT.unpack_from(chunk, offset)
        if mask & (_IN_CREATE | _IN_MOVED_TO):
            made += 1
        offset += _EVENT.size + length
    return made


class Changes:
    """An inotify instance on the workspace's folders; ``fd`` is -1 where there is none (not
    Linux, or no instance left): the ticks alone see the workspace then."""

    def __init__(self) -> None:
        libc = _libc()
        self.fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC) if libc is not None else -1
        self._watched: set[tuple[int, int]] = set()

    def watch(self, folders: dict[tuple[int, int], str]) -> None:
        if self.fd < 0:
            return
        for key, path in folders.items():
            if (
                key not in self._watched
                and _libc().inotify_add_watch(self.fd, os.fsencode(_watchable(path)), _MASK) >= 0
            ):
                self._watched.add(key)

    def drain(self) -> int:
        """Read every pending event; return how many made an entry (created or moved in)."""
        made = 0
        with contextlib.suppress(OSError):
            while chunk := os.read(self.fd, 65536):
                made += _entries_made(chunk)
        return made

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
