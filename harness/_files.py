"""Opening files without following a planted link or blocking on a FIFO.

Every file the harness writes (lock files, reports, baselines, shards, span files, the run's
own small files) is opened here: :func:`open_regular` opens with ``O_NOFOLLOW`` (a symbolic link
at the path is refused, never followed: a link at a lock file's name used to truncate its
target) and ``O_NONBLOCK`` (a FIFO with no reader fails at once instead of blocking), then
checks with ``fstat`` that what it opened is a regular file, and only then truncates it when
asked. :func:`write_atomic` writes a whole file under a fresh temporary name beside it and
renames it over the path, so a full disk or a kill never leaves half a file (a report cut at
4,096 bytes before) and a link at the path is replaced, not followed.

:func:`read_regular` and :func:`open_input` read an input (a baseline, a profile's examples
file, a span file) only when it is a regular file: a FIFO given as one hung the harness until
killed, and ``/dev/zero`` never ends. :func:`module_file_problem` says why an import found no
module when its file is a FIFO or a device (Python passes over those without a word).

A refusal is an :class:`OSError` whose ``strerror`` says what the path is and what to do.

This module is a leaf: it imports nothing from harness.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import json
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

__all__ = [
    "MAX_INPUT_BYTES",
    "bounded_lines",
    "file_kind",
    "init_file_problem",
    "json_lines",
    "json_of",
    "module_file_problem",
    "not_a_folder",
    "open_input",
    "open_regular",
    "own_folder",
    "read_regular",
    "remove_tree",
    "write_atomic",
    "written_as_stream",
]

#: A file a person writes (a suite, ``harness.toml``, ``pyproject.toml``, an ``examples_file``)
#: larger than this is refused before it is read: a 1 GB sparse file held 2.1 GB to fail.
MAX_INPUT_BYTES = 64 << 20

_SAFE = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


def file_kind(mode: int) -> str:
    """What a file of ``mode`` is, in words (``a FIFO``, ``a directory``)."""
    for test, name in (
        (stat.S_ISREG, "a regular file"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def not_a_folder(path: str | os.PathLike[str]) -> str:
    """What ``path``, found not to be a folder, is: ``a FIFO``, ``a symbolic link that loops``
    (``mkdir`` of one says only "File exists"), ``a symbolic link to nothing``."""
    try:
        return file_kind(os.stat(path).st_mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symbolic link that loops"
        if exc.errno == errno.ENOENT and os.path.islink(path):
            return "a symbolic link to nothing"
        return f"not readable ({exc.strerror})"


def own_folder(path: str | os.PathLike[str]) -> Path:
    """Create the harness's own folder ``path`` (its parents too) and check that it is a real
    folder: a symbolic link there is refused, never followed (a link planted at
    ``runs/_schema`` had the schema shards written into its target), and so is a file or a
    FIFO (``runs/_labels`` being a file gave a ``FileExistsError`` traceback). The refusal is
    an :class:`OSError` naming what is there and the fix."""
    folder = Path(path)
    with contextlib.suppress(FileExistsError):  # something else is there: said below
        folder.mkdir(parents=True, exist_ok=True)
    st = os.lstat(folder)
    if stat.S_ISDIR(st.st_mode):
        return folder
    what = not_a_folder(folder) if stat.S_ISLNK(st.st_mode) else file_kind(st.st_mode)
    if stat.S_ISLNK(st.st_mode) and not what.startswith("a symbolic link"):
        what = f"a symbolic link to {what}"
    raise OSError(errno.ENOTDIR, f"{folder} is {what}, not a folder; refused (remove it)")


def _refused(path: str | os.PathLike[str], what: str) -> OSError:
    return OSError(
        errno.EINVAL, f"{os.fspath(path)} is {what}, not a regular file; refused (remove it)"
    )


def open_regular(
    path: str | os.PathLike[str],
    flags: int,
    mode: int = 0o666,
    *,
    truncate: bool = False,
    named_by_user: bool = False,
) -> int:
    """``os.open(path, flags)`` for writing, refusing a symbolic link (not followed) and anything
    but a regular file (a FIFO, a device, a directory); ``truncate`` empties the file once it is
    known to be one (``O_TRUNC`` is not passed: it would act before the check). The descriptor
    is blocking again when returned.

    ``named_by_user``: a path the user gave for output (``--trace-file``,
    ``$GITHUB_STEP_SUMMARY``): links are followed and a device or a pipe with a reader is fine
    (``/dev/null``, ``>(cat)``); a FIFO without a reader still fails at once, never blocks."""
    safe = _SAFE & ~os.O_NOFOLLOW if named_by_user else _SAFE
    try:
        fd = os.open(path, (flags & ~os.O_TRUNC) | safe, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not named_by_user:
            raise _refused(path, "a symbolic link") from None
        if exc.errno in (errno.ENXIO, errno.EISDIR):  # a FIFO without a reader, a folder
            try:  # (raised inside a suppress before, and so swallowed: "No such device")
                what = file_kind(os.stat(path).st_mode)
            except OSError:
                raise exc from None
            if exc.errno == errno.ENXIO and what == "a FIFO":
                what = "a FIFO with no reader"
            raise _refused(path, what) from None
        raise
    try:
        st = os.fstat(fd)
        regular = stat.S_ISREG(st.st_mode)
        if not regular and not (
            named_by_user and (stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode))
        ):
            raise _refused(path, file_kind(st.st_mode))
        os.set_blocking(fd, True)
        if truncate and regular:
            os.ftruncate(fd, 0)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_input(path: str | os.PathLike[str], *, limit: int | None = None) -> BinaryIO:
    """The regular file at ``path`` (links followed) opened for reading in binary; a FIFO, a
    device (``/dev/zero`` never ends) or a folder is refused at once (a FIFO given as an input
    hung the harness until killed). ``limit``: refuse a file larger than that many bytes. A
    name no file can have (a NUL or a lone surrogate, from a TOML or YAML string such as an
    ``examples_file``) is an ``OSError`` too: it was a ``ValueError`` traceback (adversary round
    20, part B)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except ValueError as exc:  # "embedded null byte", or UnicodeEncodeError
        raise OSError(errno.EINVAL, f"no file can have this name ({exc})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(
                errno.EINVAL, f"{os.fspath(path)} is {file_kind(st.st_mode)}, not a regular file"
            )
        if limit is not None and st.st_size > limit:
            raise OSError(errno.EFBIG, f"{os.fspath(path)} is larger than {limit:,} bytes")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | os.PathLike[str], *, limit: int | None = None) -> bytes:
    """The bytes of the regular file at ``path`` (see :func:`open_input`). The ``limit`` holds
    for what is read too: a file that grows while it is read, or one whose size the kernel
    does not say (``/proc``, ``/sys``: 0 bytes by ``stat``), is refused past it."""
    with open_input(path, limit=limit) as f:
        if limit is None:
            return f.read()
        data = f.read(limit + 1)
    if len(data) > limit:
        raise OSError(errno.EFBIG, f"{os.fspath(path)} is larger than {limit:,} bytes")
    return data


def json_of(path: str | os.PathLike[str], *, limit: int = MAX_INPUT_BYTES) -> Any:
    """The JSON value of the harness's own small file at ``path`` (``finish.json``, a label's
    lock); None when it is absent, no regular file, larger than ``limit``, or no JSON Python
    can read (a FIFO there blocked every writer for ever; a value nested 200,000 deep was a
    ``RecursionError`` traceback: adversary round 20, part B)."""
    try:
        return json.loads(read_regular(path, limit=limit))
    except (OSError, ValueError, RecursionError):
        return None


def bounded_lines(f: BinaryIO, limit: int = MAX_INPUT_BYTES) -> Iterator[bytes | None]:
    """Each line of the binary file ``f``, or None for a line longer than ``limit`` bytes,
    which is read past in pieces, never held whole: a file of one endless line (3 GB of
    zeros, as a crash can leave) was read into memory whole, a ``MemoryError`` traceback
    (adversary round 21, part B)."""
    while line := f.readline(limit + 1):
        if len(line) <= limit or line.endswith(b"\n"):
            yield line
            continue
        while (rest := f.readline(limit + 1)) and not rest.endswith(b"\n"):
            pass
        yield None


def json_lines(path: str | os.PathLike[str]) -> Iterator[Any]:
    """The JSON value of each line of the harness's own JSON-lines file at ``path``
    (``cells.jsonl``, a quarantine's log), read line by line; lines that are no JSON Python can
    read (a torn last line, one nested too deeply, one longer than :data:`MAX_INPUT_BYTES`) are
    skipped; nothing when the file is absent or no regular file (see :func:`json_of`)."""
    try:
        with open_input(path) as lines:
            for line in bounded_lines(lines):
                try:
                    yield json.loads(line or b"")
                except (ValueError, RecursionError):
                    continue
    except OSError:
        return


def module_file_problem(name: str, search: Iterable[str]) -> str | None:
    """Why the module ``name`` (``pkg.mod``; its parent package imported) was not found when
    its file is there but is no regular file (Python's import passes over a FIFO named
    ``mod.py`` and says only ``No module named 'mod'``): ``/x/mod.py is a FIFO, not a regular
    file``, or None. ``search``: the folders a top-level module is looked for in."""
    parent, _, last = name.rpartition(".")
    folders = list(getattr(sys.modules.get(parent), "__path__", ())) if parent else list(search)
    return _first_irregular(os.path.join(folder or os.curdir, f"{last}.py") for folder in folders)


def init_file_problem(module: Any) -> str | None:
    """Why a package has none of the names its ``__init__.py`` defines: that file is no regular
    file (Python then imports the folder as a namespace package, empty, and a reference into
    it says only ``has no attribute``): ``/x/pkg/__init__.py is a FIFO, not a regular file``."""
    if getattr(module, "__file__", None) is not None:
        return None
    folders = list(getattr(module, "__path__", ()))
    return _first_irregular(os.path.join(folder, "__init__.py") for folder in folders)


def _first_irregular(paths: Iterable[str]) -> str | None:
    """``/x/mod.py is a FIFO, not a regular file`` for the first of ``paths`` that exists and
    is no regular file, or None."""
    for path in paths:
        try:
            mode = os.stat(path).st_mode
        except (OSError, ValueError):
            continue
        if not stat.S_ISREG(mode):
            return f"{path} is {file_kind(mode)}, not a regular file"
    return None


def write_atomic(
    path: str | os.PathLike[str],
    data: str | bytes,
    *,
    fsync: bool = False,
    named_by_user: bool = False,
) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` whole: under a fresh temporary name in the
    same folder, then renamed over ``path``. On any failure (a full disk) the temporary file is
    removed and ``path`` is as it was.

    ``named_by_user``: a path the user gave for output (``baseline save -o``) that is a device,
    a FIFO or a link into ``/proc`` (``/dev/stdout``) is written into, as a stream, not
    replaced: renaming over it replaced ``/dev/full`` itself with a regular file (as root), and
    left a reader of the FIFO waiting forever with nothing."""
    target = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if named_by_user and written_as_stream(target):
        fd = open_regular(target, os.O_WRONLY, truncate=True, named_by_user=True)
        with os.fdopen(fd, "wb") as out:
            out.write(raw)
        return
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name[:80]}.", suffix=".tmp")
    try:
        os.fchmod(fd, _mode_for(target))  # mkstemp makes 0600: as an ordinary new file would be
        with os.fdopen(fd, "wb") as out:
            out.write(raw)
            if fsync:
                out.flush()
                os.fsync(out.fileno())
        try:
            os.replace(tmp, target)
        except IsADirectoryError:  # named the temporary file: say what is in the way
            raise OSError(
                errno.EISDIR, f"{target} is a directory; cannot write the file there (remove it)"
            ) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def written_as_stream(target: str | os.PathLike[str]) -> bool:
    """Is ``target`` (links followed) a device or a FIFO, or reached through ``/proc``?

    Each hop of a link chain is looked at, not only where it ends: ``/dev/stdout`` links to
    ``/proc/self/fd/1``, whose end is the file standard output was sent to (``> b.json``), a
    regular file; taken as one, the output was renamed over ``/dev/stdout`` itself (as root,
    the machine's link was replaced by a file)."""
    try:
        st = os.stat(target)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode) and not stat.S_ISDIR(st.st_mode):
        return True
    return _through_proc(os.path.abspath(target))


def _through_proc(path: str) -> bool:
    """Does ``path``, or a link it leads through, lie under ``/proc`` (its folders' links
    resolved at each hop: ``/dev/fd/1`` is ``/proc/self/fd/1``)?"""
    for _ in range(40):  # the kernel's own bound on a chain of links
        folder, name = os.path.split(path)
        path = os.path.join(os.path.realpath(folder), name)
        if path == "/proc" or path.startswith("/proc/"):
            return True
        if not os.path.islink(path):
            return False
        try:
            path = os.path.join(os.path.dirname(path), os.readlink(path))
        except OSError:
            return False
    return False


def _mode_for(target: Path) -> int:
    """The permissions ``target`` has, or a new file would get (0666 less the umask)."""
    with contextlib.suppress(OSError):
        st = os.lstat(target)
        if stat.S_ISREG(st.st_mode):
            return stat.S_IMODE(st.st_mode)
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def remove_tree(path: str | os.PathLike[str]) -> None:
    """``shutil.rmtree(path, ignore_errors=True)`` for any depth. A model's command can nest
    folders 20,000 deep, past ``rmtree``'s recursion (``RecursionError``: the cell ended as an
    error and its workspace stayed on disk) and past ``PATH_MAX``: then each folder's subfolders
    are renamed up into ``path`` (relative to open descriptors, never following a link) until
    none is left, so no path grows and two descriptors are open at a time."""
    try:
        shutil.rmtree(path, ignore_errors=True)
        return
    except RecursionError:
        pass
    with contextlib.suppress(OSError):
        _flatten_and_remove(os.fspath(path))


def _flatten_and_remove(path: str) -> None:
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    top = os.open(path, flags)
    moved = itertools.count()
    try:
        progress = True
        while progress:  # a pass that removes nothing (a folder we may not empty) ends it
            progress = False
            for name in os.listdir(top):
                try:
                    fd = os.open(name, flags, dir_fd=top)
                except OSError:  # a file, a link, or gone
                    with contextlib.suppress(OSError):
                        os.unlink(name, dir_fd=top)
                        progress = True
                    continue
                try:
                    for inner in os.listdir(fd):
                        if stat.S_ISDIR(os.stat(inner, dir_fd=fd, follow_symlinks=False).st_mode):
                            _move_up(fd, inner, top, moved)
                        else:
                            os.unlink(inner, dir_fd=fd)
                finally:
                    os.close(fd)
                with contextlib.suppress(OSError):
                    os.rmdir(name, dir_fd=top)
                    progress = True
    finally:
        os.close(top)
    os.rmdir(path)


def _move_up(fd: int, name: str, top: int, moved: Iterator[int]) -> None:
    """Rename the folder ``name`` (in the folder ``fd``) into ``top`` under a new name."""
    for _ in range(100):
        try:
            os.rename(name, f".harness-flat-{next(moved)}", src_dir_fd=fd, dst_dir_fd=top)
            return
        except FileExistsError:  # the name is taken (as the model may have made it)
            continue
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.ENOTDIR, errno.EISDIR):
                raise
