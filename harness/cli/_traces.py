"""``harness traces``: inspect the span files the tracing setup writes (``traces show``)."""

from __future__ import annotations

import click

__all__ = ["COMMANDS", "traces", "traces_show"]


@click.group()
def traces() -> None:
    """Inspect span files written by the tracing setup."""


@traces.command("show")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--run", "run_id", default=None, help="Trace id (or prefix) or session id of a run.")
def traces_show(file: str, run_id: str | None) -> None:
    """Print the span tree of the runs in a JSON-lines span FILE."""
    from harness.telemetry._show import show_traces

    code = show_traces(file, run_id)
    if code:
        raise SystemExit(code)


#: The commands this module adds to the root group.
COMMANDS: tuple[click.Command, ...] = (traces,)
