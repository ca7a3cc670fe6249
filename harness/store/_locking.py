"""Who holds the database: the lock file next to it, and turning DuckDB's lock error into
:class:`StoreLocked`.

DuckDB's own file lock is what keeps a second process out (it refuses a second process even a
read-only open while a writer holds the file, and the OS drops the lock when the holder dies). The
lock file ``<db>.lock`` only says who the holder is: pid, host, command line and since when, so
the error can name them. It is written after DuckDB's lock is taken and removed on close; one left
behind by a killed process is stale and simply taken over by the next writer.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import socket
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from harness.store.errors import StoreLocked

__all__ = ["LockInfo", "locked_error", "pid_alive", "read_lock", "release_lock", "write_lock"]

log = logging.getLogger("harness.store")

_DUCKDB_HOLDER = re.compile(r"Conflicting lock is held in (?P<exe>.*?) \(PID (?P<pid>\d+)\)")


@dataclass(frozen=True, slots=True)
class LockInfo:
    pid: int
    host: str
    since: str
    command: str

    def describe(self) -> str:
        where = "" if self.host == socket.gethostname() else f" on {self.host}"
        return f"PID {self.pid}{where} ({self.command}, since {self.since})"


def lock_path(db: Path) -> Path:
    return db.with_name(db.name + ".lock")


def pid_alive(pid: int) -> bool:
    """True iff a process ``pid`` exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rpartition(")")[2].split()[:1] != ["Z"]


def read_lock(db: Path) -> LockInfo | None:
    try:
        data: Any = json.loads(lock_path(db).read_text(encoding="utf-8"))
        return LockInfo(
            int(data["pid"]), str(data["host"]), str(data["since"]), str(data["command"])
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_lock(db: Path) -> None:
    """Record this process as the writer (called once DuckDB's lock is held)."""
    old = read_lock(db)
    if old is not None and old.pid != os.getpid():
        alive = old.host == socket.gethostname() and pid_alive(old.pid)
        log.info(
            "harness: taking over the lock file of %s (%s)",
            old.describe(),
            "DuckDB lock free" if alive else "process gone",
        )
    command = " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]) if sys.argv else "python"
    info = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "since": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": command[:200],
    }
    path = lock_path(db)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(info), encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:  # the lock file is informative only
        log.warning("harness: cannot write %s: %s", path, exc)


def release_lock(db: Path) -> None:
    info = read_lock(db)
    if info is not None and info.pid == os.getpid():
        with contextlib.suppress(OSError):
            lock_path(db).unlink()


def locked_error(db: Path, exc: BaseException | None = None) -> StoreLocked:
    """The error for a database someone holds, naming the holder's PID. ``exc`` is DuckDB's
    error; ``None`` means a writer :class:`Store` of this process holds it."""
    me = os.getpid()
    info = read_lock(db)
    if exc is None or isinstance(exc, duckdb.ConnectionException):
        # DuckDB shares one instance per file within a process: the holder is this process.
        if exc is None:
            since = f" since {info.since}" if info is not None and info.pid == me else ""
            what = (
                f"a Store has it open for writing{since}); close that Store first "
                "(Store.open(path, read_only=True) can read it meanwhile)"
            )
        else:
            what = "a DuckDB connection with other settings has it open); close that first"
        return StoreLocked(f"database {db} is in use by PID {me} (this process: {what}", pid=me)
    match = _DUCKDB_HOLDER.search(str(exc))
    pid = int(match["pid"]) if match else None
    if info is not None and (pid is None or info.pid == pid):
        holder, pid = info.describe(), info.pid
    elif match:
        holder = f"PID {match['pid']} ({match['exe']})"
    else:
        holder = "another process"
    return StoreLocked(
        f"database {db} is in use by {holder}; DuckDB lets one process write a file, or "
        "several read it, never both: wait for that process to finish, or stop it",
        pid=pid,
    )
