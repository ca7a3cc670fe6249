"""``harness traces``: inspect the span files the tracing setup writes (``traces show``)."""

from __future__ import annotations

import click

__all__ = ["COMMANDS", "traces", "traces_show"]


@click.group()
def traces() -> None:
    """Inspect span files written by the tracing setup."""


@traces.command("show")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--run",
    "run_id",
    default=None,
    help="A trace id (or prefix), a session id, or a bench task (TASK or SUITE/TASK).",
)
@click.option(
    "--db",
    default="reports/harness.duckdb",
    show_default=True,
    type=click.Path(dir_okay=False),
    help="Results database the pass column is read from (by trace id), when it exists.",
)
def traces_show(file: str, run_id: str | None, db: str) -> None:
    """Print the span tree of the runs in a JSON-lines span FILE (a table of them when there
    are many: suite, task, mode, provider, epoch, finish reason, pass)."""
    from harness.telemetry._show import show_traces

    code = show_traces(file, run_id, grades=lambda ids: _grades(db, ids))
    if code:
        raise SystemExit(code)


def _grades(db: str, trace_ids: list[str]) -> dict[str, str]:
    """``results.status`` by trace id, read through the store (its own views: the file's
    ``results`` view, edited by hand to say ``passed``, was read as it was; adversary round 21,
    part B); {} when the database is absent or cannot be read (the column shows ``?``)."""
    from pathlib import Path

    from harness.store import Store

    if not Path(db).is_file() or not trace_ids:
        return {}
    try:
        with Store.open(db, read_only=True) as store:
            rows = store.con.execute(
                "SELECT trace_id, arg_max(status, finished_at) FROM results "
                "WHERE list_contains(?, trace_id) GROUP BY trace_id",
                [trace_ids],
            ).fetchall()
    except Exception:  # locked by a writer, not a harness database: the column stays unknown
        return {}
    return {str(t): str(s) for t, s in rows}


#: The commands this module adds to the root group.
COMMANDS: tuple[click.Command, ...] = (traces,)
