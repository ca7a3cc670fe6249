"""One temporary folder per run, holding every cell's workspace, removed when the run ends.

``$TMPDIR/harness-run-<run_id>/`` holds a ``pid`` file (the process running it), an
``alive.lock`` on which that process holds an ``flock`` for the run's life, and one ``cell-*``
workspace per cell in flight. The runner removes each workspace when its cell is done and the
whole folder when the run ends, however it ends short of ``kill -9``. A folder left by a killed
run (its lock held by no one; without a lock file, its pid no longer alive) is removed by
:func:`remove_stale`, which ``harness run`` calls at every start, ``--resume`` included; so are
``harness-cell-*`` folders older than a day (left by versions that had no run folder).
"""

from __future__ import annotations

import contextlib
import os
import socket
import tempfile
import time
from pathlib import Path

from harness._files import read_regular, remove_tree, write_atomic
from harness.store._alive import held, take

__all__ = ["LEGACY_CELL_PREFIX", "RUN_PREFIX", "RunFolder", "remove_stale"]

RUN_PREFIX = "harness-run-"
_PID_FILE = "pid"
#: The file whose ``flock`` the run's process holds while the run lives.
_LOCK_FILE = "alive.lock"
#: A pid file is a pid and a host name: anything longer is not one.
_PID_FILE_BYTES = 4096
#: The largest pid (Linux's ``pid_max`` is at most 2**22).
_MAX_PID = 2**31 - 1
#: A folder without a pid file is left alone this long (its run may be writing it right now).
_GRACE_S = 60.0
#: Workspaces made outside a run folder (older versions, or a Runner used without one).
LEGACY_CELL_PREFIX = "harness-cell-"
#: Such a folder is removed once it is this old (no cell runs for a day).
_LEGACY_AGE_S = 24 * 3600.0


class RunFolder:
    """The temporary folder of one run (created on construction)."""

    def __init__(self, run_id: str, root: Path | None = None) -> None:
        self.root = Path(root) if root is not None else Path(tempfile.gettempdir())
        self.path = self.root / f"{RUN_PREFIX}{run_id}"
        if self.path.exists() and not _alive(self.path):
            remove_tree(self.path)  # left by a killed run of this id
        self.path.mkdir(parents=True, exist_ok=True)
        write_atomic(self.path / _PID_FILE, f"{os.getpid()}\n{socket.gethostname()}\n")
        self._lock: int | None = take(self.path / _LOCK_FILE, str(self.path))

    def remove(self) -> None:
        remove_tree(self.path)
        lock, self._lock = self._lock, None
        if lock is not None:
            os.close(lock)

    def __enter__(self) -> RunFolder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def remove_stale(root: Path | None = None) -> list[Path]:
    """Remove the run folders under ``root`` (default: the temp dir) whose process is dead;
    returns the folders removed. Folders of live runs, and of runs on other hosts sharing the
    folder, are kept."""
    root = Path(root) if root is not None else Path(tempfile.gettempdir())
    removed = []
    with contextlib.suppress(OSError):
        for folder in root.glob(f"{RUN_PREFIX}*"):
            if folder.is_dir() and not folder.is_symlink() and not _alive(folder):
                remove_tree(folder)
                removed.append(folder)
        # Cell folders of older harness versions (no run folder, no pid): only old ones.
        for folder in root.glob(f"{LEGACY_CELL_PREFIX}*"):
            if folder.is_dir() and not folder.is_symlink() and _age_s(folder) > _LEGACY_AGE_S:
                remove_tree(folder)
                removed.append(folder)
    return removed


def _age_s(folder: Path) -> float:
    try:
        return time.time() - folder.stat().st_mtime
    except OSError:
        return 0.0


def _alive(folder: Path) -> bool:
    """Whether the run that owns ``folder`` may still be running: its process holds the
    folder's lock file; without one (a harness before it), its pid file names a live process
    (a pid is reused: a dead run's may be another process's now). The pid file is read as a
    small regular file only: a FIFO there (any user may make ``/tmp/harness-run-x/pid``) held
    every ``harness run`` for ever at its start, and a pid past the C long an ``OverflowError``
    traceback (adversary round 22, part B)."""
    if (holder := held(folder / _LOCK_FILE)) is not None:
        return holder
    try:
        text = read_regular(folder / _PID_FILE, limit=_PID_FILE_BYTES)
        pid_text, _, host = text.decode("utf-8", "replace").partition("\n")
        pid = int(pid_text)
    except (OSError, ValueError):  # no pid file: a run starting now, or one killed at start
        try:
            return time.time() - folder.stat().st_mtime < _GRACE_S
        except OSError:
            return False
    if host.strip() and host.strip() != socket.gethostname():
        return True  # another machine's run: we cannot tell, so keep it
    if pid == os.getpid():
        return True
    if not 0 < pid <= _MAX_PID:  # no process has it (0 and -1 signal a group, all processes)
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, owned by someone else
    return True
