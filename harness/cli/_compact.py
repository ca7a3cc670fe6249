"""``harness compact``: move the Parquet shards of runs that ended into the database's tables.

Exit codes: 0 success (also when there was nothing to compact; damaged shards moved to quarantine
are reported, not failed), 2 bad input (no database, or it is held by another program past the
wait), 3 the disk stayed full past ``HARNESS_DISK_FULL_WAIT_S`` (not bad input; nothing was lost:
each batch of shards is committed in one transaction, and the shards stay readable until then).
"""

from __future__ import annotations

import click

from harness.cli._common import db_option, echo, echo_line, fail

__all__ = ["COMMANDS", "compact"]


@click.command("compact")
@db_option("The results database.")
@click.option(
    "--repair",
    is_flag=True,
    help="Read every shard whole first and move damaged ones to reports/runs/RUN/quarantine/ "
    "(the run's error names the cells they held; `harness run --resume` runs them again).",
)
def compact(db: str, repair: bool) -> None:
    """Move the result and span shards of runs that ended (reports/runs/RUN/) into the tables
    of the database (runs still running are left alone). `harness run` does it at its end; run
    this after a run that was killed, or that ended while another program held the file."""
    from pathlib import Path

    from harness.errors import HarnessError
    from harness.store import Store
    from harness.store._damage import scan
    from harness.store._diskfull import is_disk_full
    from harness.store._shards import runs_dir

    path = Path(db)
    if not path.exists():
        fail(f"{path}: no results database (`harness run` creates it)")
    try:
        damaged = scan(runs_dir(path.resolve()), full=True) if repair else []
        with Store.open(path) as store:
            stats = store.compact()
    except (HarnessError, OSError) as exc:
        if is_disk_full(exc):  # not bad input: the same command works once there is room
            echo(
                f"error: the disk is full: {exc}\nnothing was lost: each batch of shards is "
                "compacted in one transaction, and the shards stay readable until then; run "
                f"`harness compact --db {db}` again once there is room",
                err=True,
            )
            raise SystemExit(3) from None
        if not isinstance(exc, HarnessError):
            raise
        fail(str(exc))
    for d in damaged:
        echo_line(f"quarantined: run {d.run_id}: {d.describe()} -> {d.moved_to}", err=True)
    for why in stats.quarantined:
        echo_line(f"quarantined: {why}", err=True)
    if repair and not damaged:
        echo("repair: every shard reads whole", err=True)
    echo(
        f"compacted {stats.runs} run(s): {stats.results} results, {stats.spans} spans, "
        f"{stats.files} shard files removed -> {db}"
    )
    for why in stats.skipped:
        echo_line(f"left as shards: {why}", err=True)


#: The commands this module adds to the root group.
COMMANDS: tuple[click.Command, ...] = (compact,)
