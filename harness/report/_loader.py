"""Load a run's results from the DuckDB store (a thin wrapper over :mod:`harness.store`).

Everything else in :mod:`harness.report` works on DataFrames; this is the only module that touches
the database, and it opens it read-only.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from harness.errors import HarnessError
from harness.report._tables import ReportInputError

if TYPE_CHECKING:
    from harness.store import Store

__all__ = ["DEFAULT_DB", "load_run", "resolved_run", "unfinished"]

DEFAULT_DB = Path("reports/harness.duckdb")


def load_run(db: str | Path = DEFAULT_DB, run: str | None = "latest") -> tuple[str, pd.DataFrame]:
    """Return ``(run_id, results)`` for ``run`` (an id, or ``"latest"``) in the database ``db``.

    ``results`` has one row per cell (the latest result of each), the columns of docs/sql.md.
    A missing file, an unknown run or a locked or too-new database raises :class:`ReportInputError`
    with the store's message.
    """
    from harness.store import resolve_run_id, results_df

    with _reading(db) as store:
        run_id = resolve_run_id(store, run)
        return run_id, results_df(store, run_id)


def resolved_run(db: str | Path, run: str | None = "latest") -> str:
    """The id ``run`` (an id, or ``"latest"``) names in ``db``; errors as :func:`load_run`'s."""
    from harness.store import resolve_run_id

    with _reading(db) as store:
        return resolve_run_id(store, run)


@contextlib.contextmanager
def _reading(db: str | Path) -> Iterator[Store]:
    """The store at ``db`` opened read-only; what the store raises (a missing file, an unknown
    run, a locked or too-new database) as :class:`ReportInputError` naming the file."""
    from harness.store import Store

    path = Path(db)
    if not path.exists():
        raise ReportInputError(f"{path}: no results database (`harness run` creates it)")
    try:
        store = Store.open(path, read_only=True)
    except HarnessError as exc:
        raise ReportInputError(f"{path}: {exc}") from exc
    try:
        yield store
    except ReportInputError:
        raise
    except HarnessError as exc:
        raise ReportInputError(f"{path}: {exc}") from exc
    finally:
        store.close()


def unfinished(db: str | Path, run_id: str) -> tuple[bool, str] | None:
    """Whether ``run_id`` had not ended when it was read: ``(running, why)``, ``running`` when
    its process is alive (on this host; another host's cannot be checked), else None. A
    baseline saved from it held only the cells stored so far, without a word (adversary round
    16, part B: 34 of a run's 40 cells, saved while it ran)."""
    import socket

    from harness.store._alive import alive
    from harness.store._locking import pid_alive
    from harness.store._shards import runs_dir

    with _reading(db) as store:
        row = store.con.execute(
            "SELECT status, pid, host FROM bench_runs WHERE run_id = ?", [run_id]
        ).fetchone()
    if row is None or row[0] not in ("running", "interrupted", "failed"):
        return None
    status, pid, host = row
    here = host == socket.gethostname()
    held = alive(runs_dir(Path(db)), run_id)  # its process holds its lock (a pid is reused)
    if held is None:
        held = not here or (pid is not None and pid_alive(int(pid)))
    if status == "running" and held:
        where = "" if here else f" on {host}"
        return True, f"it is still running (process {pid}{where})"
    return False, "it was interrupted" if status == "running" else f"it ended {status}"
