"""``harness cassettes``: check the VCR cassettes the bench replays (``cassettes lint``)."""

from __future__ import annotations

import click

from harness.cli._common import echo, guarded

__all__ = ["COMMANDS", "cassettes", "cassettes_coverage", "cassettes_lint"]


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


@cassettes.command("coverage")
@click.argument("directory", default="cassettes", type=click.Path(exists=True))
def cassettes_coverage(directory: str) -> None:
    """Check that every recorded server showed the model its system message: the prompt
    tokens each reply reports must cover the request's system text.

    One line per provider folder. Exit 0 when every provider passes (a retired profile's
    failure is shown with its reason but does not count), 1 otherwise."""
    from harness.cassettes._coverage import system_coverage
    from harness.providers._profiles import load_profiles

    def action() -> int:
        coverage = system_coverage(directory)
        if not coverage.judged:  # said nothing, exit 0, over a folder of corrupt cassettes
            echo(
                f"no recorded request under {directory} has a system message long enough to "
                "judge: nothing checked (corrupt cassettes: see `harness cassettes lint`)"
            )
            return 0
        profiles = load_profiles()
        failed = False
        for provider, line in coverage.lines().items():
            retired = profiles[provider].retired if provider in profiles else None
            echo(f"{line} [retired: {retired}]" if retired else line)
            failed = failed or (coverage.short[provider] > 0 and retired is None)
        return 1 if failed else 0

    # A FIFO or a device as DIRECTORY was a ConfigError traceback, exit 1.
    code = guarded(action)
    if code:
        raise SystemExit(code)


#: The commands this module adds to the root group.
COMMANDS: tuple[click.Command, ...] = (cassettes,)
