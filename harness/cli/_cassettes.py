"""``harness cassettes``: check the VCR cassettes the bench replays (``cassettes lint``)."""

from __future__ import annotations

import click

from harness.cli._common import echo

__all__ = ["COMMANDS", "cassettes", "cassettes_lint"]


@click.group()
def cassettes() -> None:
    """Check the VCR cassettes the bench replays."""


@cassettes.command("lint")
@click.argument("directory", default="cassettes", type=click.Path())
@click.option(
    "--traces",
    "traces",
    multiple=True,
    type=click.Path(),
    help="Trace files or folders of *.jsonl to check too (default: reports/traces if present).",
)
def cassettes_lint(directory: str, traces: tuple[str, ...]) -> None:
    """Fail on secret-looking values in the cassettes under DIRECTORY (default ./cassettes)
    and in trace files.

    Exit 0 when clean, 1 on a secret, 2 on a corrupt cassette or a missing DIRECTORY."""
    from pathlib import Path

    from harness.cassettes._lint import lint_main

    if not traces and Path("reports/traces").is_dir():
        traces = ("reports/traces",)
    code = lint_main(directory, echo, traces)
    if code:
        raise SystemExit(code)


#: The commands this module adds to the root group.
COMMANDS: tuple[click.Command, ...] = (cassettes,)
