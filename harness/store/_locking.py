"""Who holds the database: turning DuckDB's lock error into :class:`StoreLocked`, and whether a
process is alive (for closing the runs of dead processes).

DuckDB's own file lock lets one process write a file, or several read it, never both. harness
holds it only for moments (a writer opens and closes a run, a reader runs its queries), and waits
for another process's moment (:data:`harness.store._writer.LOCK_WAIT_S`); a holder that keeps the
file longer (a ``duckdb`` shell, a notebook) is named by PID in the error.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import duckdb

from harness.errors import StoreLocked

__all__ = ["locked_error", "pid_alive"]

_DUCKDB_HOLDER = re.compile(r"Conflicting lock is held in (?P<exe>.*?) \(PID (?P<pid>\d+)\)")


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


def locked_error(db: Path, exc: BaseException) -> StoreLocked:
    """The error for a database someone holds, naming the holder's PID (``exc``: DuckDB's)."""
    me = os.getpid()
    if isinstance(exc, duckdb.ConnectionException):
        # DuckDB shares one instance per file within a process: the holder is this process.
        return StoreLocked(
            f"database {db} is in use by PID {me} (this process: a DuckDB connection with other "
            "settings, e.g. read-only, has it open); close that first",
            pid=me,
        )
    match = _DUCKDB_HOLDER.search(str(exc))
    pid = int(match["pid"]) if match else None
    holder = f"PID {match['pid']} ({match['exe']})" if match else "another process"
    return StoreLocked(
        f"database {db} is in use by {holder}; DuckDB lets one process write a file, or "
        "several read it, never both, and harness waits only a few seconds: close that "
        "program (a duckdb shell, a notebook), or stop it",
        pid=pid,
    )
