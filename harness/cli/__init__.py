"""The ``harness`` command: the root group, with one module per command group.

- :mod:`harness.cli._run`: ``harness run`` (with :mod:`harness.cli._progress`, the progress bar
  and the Ctrl-C handling);
- :mod:`harness.cli._report`, :mod:`harness.cli._gate`, :mod:`harness.cli._baseline`: the report,
  the CI gate and the committed baseline (sharing :mod:`harness.cli._common`);
- :mod:`harness.cli._suites`, :mod:`harness.cli._cassettes`, :mod:`harness.cli._traces`: checks of
  suite files, cassettes and span files;
- :mod:`harness.cli._view`: ``harness view``, the local web viewer (:mod:`harness.view`).
- :mod:`harness.cli._compact`: ``harness compact``, shards of ended runs into the tables.

The commands are thin: they parse arguments and call the packages. Only click loads at import
time (each command imports what it needs when it runs), so ``harness --help`` stays fast.
``python -m harness.cli`` runs the same command (:mod:`harness.cli.__main__`).
"""

from __future__ import annotations

from typing import NoReturn

import click

from harness._oneline import one_line
from harness._version import __version__
from harness.cli import _baseline as baseline
from harness.cli import _cassettes as cassettes
from harness.cli import _compact as compact
from harness.cli import _gate as gate
from harness.cli import _plugins as plugins
from harness.cli import _report as report
from harness.cli import _run as run
from harness.cli import _suites as suites
from harness.cli import _traces as traces
from harness.cli import _view as view
from harness.cli._common import safe_text

__all__ = ["main"]


class _Root(click.Group):
    """The root group. Click's own error messages (a bad option value, a missing file) quote
    what was passed: they are shown with control characters escaped too. A
    ``KeyboardInterrupt`` that reaches it ends the command with exit 130."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except click.ClickException as exc:
            # setattr: newer click marks ``message`` Final (set once, in __init__)
            setattr(exc, "message", safe_text(exc.message))  # noqa: B010
            raise
        except KeyboardInterrupt:
            # Ctrl-C outside a run's own handling (while suites load, a plug-in imports, a
            # report is written), or a plug-in raising it: exit 130 as documented, not
            # click's "Aborted!" and 1.
            _interrupted()
        except Exception as exc:
            if _query_interrupted(exc):
                _interrupted()
            if not _from_duckdb(exc):
                raise
            _database_failed(exc)


def _interrupted() -> NoReturn:
    click.echo("interrupted", err=True)
    raise SystemExit(130) from None


def _query_interrupted(exc: Exception) -> bool:
    """Ctrl-C while DuckDB runs a query: its client takes the ``KeyboardInterrupt`` and raises
    a plain ``RuntimeError('Query interrupted')`` instead (``compact``'s traceback, exit 1, in
    adversary round 16, part B)."""
    return type(exc) is RuntimeError and str(exc) == "Query interrupted"


def _from_duckdb(exc: BaseException) -> bool:
    return any(c.__module__.split(".")[0] in ("duckdb", "_duckdb") for c in type(exc).__mro__)


def _database_failed(exc: Exception) -> NoReturn:
    """A DuckDB error no command expected (a file cut short or damaged, a runs folder that is a
    file: round 14 saw tracebacks, exit 1, from ``report``, ``gate``, ``compact`` and ``run``):
    one line, exit 3 when the disk is full, else 2."""
    from harness.store._diskfull import is_disk_full

    said = one_line(exc)
    if is_disk_full(exc):
        click.echo(safe_text(f"error: the disk is full: {said}; free some space and run it "
                             "again"), err=True)  # fmt: skip
        raise SystemExit(3) from None
    why = (
        "the runs folder beside the database is gone or is no folder: `harness compact` makes "
        "it again"
        if "No files found that match the pattern" in said
        else "is the file damaged, or edited by hand?"
    )
    click.echo(safe_text(f"error: the database could not be read or written: "
                         f"{type(exc).__name__}: {said} ({why})"), err=True)  # fmt: skip
    raise SystemExit(2) from None


@click.group(cls=_Root, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="harness")
def main() -> None:
    """Evaluate and benchmark LLM agent loops."""


def _register() -> None:
    """Add every command group's commands to the root group (the help lists them sorted)."""
    for module in (run, traces, cassettes, suites, report, gate, baseline, view, compact, plugins):
        for command in module.COMMANDS:
            main.add_command(command)


_register()
