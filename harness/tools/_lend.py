"""Lending the workspace to the sandbox's uid (as root) for one command, and giving it back
(:mod:`harness.tools._sandbox`).

Both walk the folder the harness holds by descriptor, never a path: every entry is opened from
its folder's descriptor with ``O_NOFOLLOW`` (``O_PATH``), fstat-ed and chowned through that same
descriptor, so a folder swapped for a symlink to the host meanwhile (a sibling's shell can do it
in a loop) is passed over, never entered, and the owner recorded is the owner of the inode
changed. Links are never lent; one the command made is given back as a link, in its folder. The
folders lent are held open (up to :data:`MAX_HELD`), so one renamed by another process while the
give-back walks past it is still given back.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field

__all__ = ["MAX_HELD", "Lent", "give_back", "hand_over"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
_PATH_FLAGS = os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC

Key = tuple[int, int]  # (device, inode)
#: Folders whose descriptors a lending keeps, so that giving back reaches them all.
MAX_HELD = 256


@dataclass(slots=True)
class Lent:
    """What :func:`hand_over` lent: the owners to put back (by inode) and descriptors of the
    folders lent (the first :data:`MAX_HELD`), closed by :func:`give_back`."""

    owners: dict[Key, tuple[int, int]] = field(default_factory=dict)
    folders: dict[Key, int] = field(default_factory=dict)


def hand_over(top: int, uid: int, borrowers: range) -> Lent:
    """As root, give the held workspace folder ``top`` and all in it to the sandbox's user, so
    the command can write in it; returns what to put back afterwards (:func:`give_back`). Each
    entry is fstat-ed and chowned through one descriptor; links are left alone. An owner among
    ``borrowers`` (the sandbox's uids: left by a command whose give-back another process
    raced) is not kept: it goes back to the workspace folder's owner."""
    lent = Lent()
    try:
        for _, fd, st in _tree(top):
            if stat.S_ISLNK(st.st_mode):  # the command needs no link of its own
                continue
            key = (st.st_dev, st.st_ino)
            if key not in lent.owners and st.st_uid not in borrowers:  # hard links once
                lent.owners[key] = (st.st_uid, st.st_gid)
            if (
                stat.S_ISDIR(st.st_mode)
                and key not in lent.folders
                and len(lent.folders) < MAX_HELD
            ):
                lent.folders[key] = os.dup(fd)
            _chown(fd, uid, uid)
    except BaseException:
        give_back(top, lent)
        raise
    return lent


def give_back(top: int, lent: Lent) -> None:
    """Put the owners back; files the command made go to the workspace folder's owner. A lent
    folder the walk from ``top`` missed (renamed by another process during the walk) is walked
    from its held descriptor."""
    here = os.fstat(top)
    default = lent.owners.get((here.st_dev, here.st_ino), (os.geteuid(), os.getegid()))
    seen: set[Key] = set()
    try:
        for start in [top, *lent.folders.values()]:
            if start != top and _key(os.fstat(start)) in seen:
                continue
            for where, fd, st in _tree(start):
                seen.add(_key(st))
                _restore(where, fd, st, lent.owners.get(_key(st), default))
    finally:
        for fd in lent.folders.values():
            os.close(fd)
        lent.folders.clear()


def _key(st: os.stat_result) -> Key:
    return (st.st_dev, st.st_ino)


def _restore(
    where: tuple[int, str] | None, fd: int, st: os.stat_result, owner: tuple[int, int]
) -> None:
    if owner == (st.st_uid, st.st_gid):
        return
    if not stat.S_ISLNK(st.st_mode):
        _chown(fd, *owner)
    elif where is not None:  # one the command made: the link itself, in its folder
        with contextlib.suppress(OSError):
            os.chown(where[1], *owner, dir_fd=where[0], follow_symlinks=False)


def _chown(fd: int, uid: int, gid: int) -> None:
    with contextlib.suppress(OSError):  # the inode the descriptor holds (an O_PATH one too)
        os.chown(f"/proc/self/fd/{fd}", uid, gid)


def _tree(top: int) -> Iterator[tuple[tuple[int, str] | None, int, os.stat_result]]:
    """``((folder descriptor, name), descriptor, fstat)`` of the folder ``top`` (with None) and
    of everything in it (each descriptor open only until the next step). Every entry is opened
    from its folder's descriptor with ``O_NOFOLLOW`` (``O_PATH``: nothing is read, a FIFO does
    not block, a link is the link itself), never by a path from the root, so a folder swapped
    for a link is passed over, never entered."""
    yield None, top, os.fstat(top)
    stack: list[tuple[int, Iterator[str]]] = []
    with contextlib.suppress(OSError):
        stack.append((top, iter(os.listdir(top))))
    try:
        while stack:
            folder, names = stack[-1]
            name = next(names, None)
            if name is None:
                stack.pop()
                if folder != top:
                    os.close(folder)
                continue
            try:
                fd = os.open(name, _PATH_FLAGS, dir_fd=folder)
            except OSError:  # gone, or too many open
                continue
            try:
                st = os.fstat(fd)
                if stat.S_ISDIR(st.st_mode):  # the same folder, opened to be listed
                    sub = os.open(".", _DIR_FLAGS, dir_fd=fd)
                    stack.append((sub, iter(())))
                    yield (folder, name), sub, st
                    stack[-1] = (sub, iter(os.listdir(sub)))
                else:
                    yield (folder, name), fd, st
            except OSError:
                continue
            finally:
                os.close(fd)
    finally:
        for folder, _ in stack:
            if folder != top:
                os.close(folder)
