"""The ``harness`` command (thin: parses arguments, calls the packages)."""

from __future__ import annotations

import click

from harness._version import __version__

__all__ = ["main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="harness")
def main() -> None:
    """Evaluate and benchmark LLM agent loops."""


@main.command()
@click.option(
    "--modes",
    default="react,plan_and_solve,reflexion",
    show_default=True,
    help="Comma-separated modes to compare.",
)
@click.option("--epochs", default=1, show_default=True, type=click.IntRange(1, 100))
def demo(modes: str, epochs: int) -> None:
    """Run the built-in demo matrix on the scripted mock provider (offline)."""
    from harness.bench.demo import print_demo
    from harness.errors import ConfigError
    from harness.modes.base import resolve_mode

    names = [m.strip() for m in modes.split(",") if m.strip()]
    try:
        for name in names:
            resolve_mode(name)
    except ConfigError as exc:
        raise click.BadParameter(str(exc), param_hint="--modes") from None
    failed = print_demo(names, epochs)
    # A failing task is data, not an error: exit 0 either way.
    click.echo(f"{failed} failed cell(s)" if failed else "all cells passed")


@main.group()
def traces() -> None:
    """Inspect span files written by the tracing setup."""


@traces.command("show")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--run", "run_id", default=None, help="Trace id (or prefix) or session id of a run.")
def traces_show(file: str, run_id: str | None) -> None:
    """Print the span tree of the runs in a JSON-lines span FILE."""
    from harness.telemetry.show import show_traces

    code = show_traces(file, run_id)
    if code:
        raise SystemExit(code)


@main.group()
def cassettes() -> None:
    """Check the VCR cassettes the bench replays."""


@cassettes.command("lint")
@click.argument("directory", default="cassettes", type=click.Path())
def cassettes_lint(directory: str) -> None:
    """Fail on secret-looking values in the cassettes under DIRECTORY (default ./cassettes).

    Exit 0 when clean, 1 on a secret, 2 on a corrupt cassette or a missing DIRECTORY."""
    from harness.bench.cassette_lint import lint_main

    code = lint_main(directory, click.echo)
    if code:
        raise SystemExit(code)


@main.group()
def suites() -> None:
    """Check suite files."""


@suites.command("validate")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
def suites_validate(paths: tuple[str, ...]) -> None:
    """Validate suite files (a folder means every *.yaml / *.yml in it).

    Prints one OK line per valid suite; exits 2 with every error (file:line, task, field) if any
    file is invalid."""
    from harness.bench.suite import collect_suites

    found, issues = collect_suites(paths)
    for suite in found:
        n = len(suite.tasks)
        click.echo(f"OK {suite.name}: {n} task{'s' * (n != 1)} ({suite.source})")
    for issue in issues:
        click.echo(issue, err=True)
    if issues:
        raise SystemExit(2)


if __name__ == "__main__":
    main()
