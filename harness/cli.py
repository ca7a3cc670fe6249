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


if __name__ == "__main__":
    main()
