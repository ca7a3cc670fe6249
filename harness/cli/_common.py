"""What the ``report``, ``gate`` and ``baseline`` commands share: the ``--db``/``--run`` options,
loading a run, and turning bad input into exit 2 with a one-line message (the message names the
file, run or field); and :func:`echo`, how every command prints a line.

Every line the CLI prints goes through :func:`echo` (or, for rich output, the console of
:mod:`harness.cli._console`): text from models, providers, tools, suites and file names may hold
terminal escape sequences (retitle the window, clear the screen, hide text), so control
characters, C1 and bidirectional overrides are shown escaped (``\\x1b``), never raw.

This module imports only click at import time (pandas, scipy and duckdb load when a command runs),
so ``harness --help`` stays fast.
"""

from __future__ import annotations

import contextlib
import os
import stat
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from harness._oneline import LINE_LIMIT, cut, one_line
from harness.telemetry._escape import escape_controls

if TYPE_CHECKING:
    import pandas as pd

    from harness.report._baseline import Baseline

__all__ = [
    "baseline_arg",
    "check_out_dir",
    "cut_lines",
    "db_option",
    "db_options",
    "echo",
    "echo_line",
    "fail",
    "guarded",
    "load",
    "safe_text",
    "warn",
]

F = TypeVar("F", bound=Callable[..., Any])
_DB_HELP = "The results database."
_RUN_HELP = "A run id, or 'latest'."


def safe_text(text: object) -> str:
    """``text`` as the CLI shows it: control characters escaped, except newlines and tabs."""
    return escape_controls(str(text), keep="\n\t")


def cut_lines(text: str) -> str:
    """Each line of ``text`` cut as :func:`fail` cuts: a suite's error names the value it
    refuses, and a value of 1 MB (a task id, a grader kind, a label lock's holder) printed a
    1 MB line from `suites validate`, `suites audit` and `harness run` (adversary round 22,
    part B). A line keeps its start and its end, which says what is wrong with the value."""
    half = LINE_LIMIT // 2 - 40  # (within what echo_line keeps)
    return "\n".join(
        f"{line[:half]} ...({len(line) - 2 * half} characters left out)... {line[-half:]}"
        if len(line) > LINE_LIMIT
        else line
        for line in text.split("\n")
    )


def echo(message: object = "", err: bool = False) -> None:
    """Print a line (on standard error with ``err``), control characters escaped."""
    click.echo(safe_text(message), err=err)


def echo_line(message: object = "", err: bool = False) -> None:
    """Print ``message`` on one line: line breaks escaped too (a run id edited into the
    database, ``R\nharness gate: PASSED``, printed that line of its own after ``wrote
    b.json: run R`` and ``run R``; adversary round 19, part B), cut as :func:`fail` cuts (a
    run id of 1 MB edited into the database printed a 1 MB line; round 21, part B)."""
    click.echo(escape_controls(cut(str(message))), err=err)


def warn(message: object) -> None:
    """Print ``warning: message`` on standard error, on one line (see :func:`fail`)."""
    click.echo(escape_controls(cut(f"warning: {message}")), err=True)


def fail(message: str) -> NoReturn:
    """Print ``error: message`` on one line and exit 2: a line break in it (a run id from a
    database edited by hand, a baseline's cell) is shown escaped, as every control character
    (``run R\nharness gate: PASSED`` printed a line of its own; adversary round 18, part B),
    and cut to :data:`~harness._oneline.LINE_LIMIT` characters (a 1 MB cell name from a
    baseline printed whole; round 20, part B)."""
    click.echo(escape_controls(cut(f"error: {message}")), err=True)
    raise SystemExit(2)


def _utf8_path(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A path DuckDB can open: valid UTF-8 (a name from other bytes gave a DuckDB traceback)."""
    try:
        if value is not None:
            value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise click.BadParameter(
            f"{value!r} is not valid UTF-8 (byte {exc.start}); DuckDB opens only UTF-8 paths: "
            "rename it",
            ctx,
            param,
        ) from None
    return value


def db_option(help: str = _DB_HELP) -> Callable[[F], F]:
    """The ``--db PATH`` option every command that reads or writes the store takes."""
    return click.option(
        "--db",
        default="reports/harness.duckdb",
        show_default=True,
        type=click.Path(dir_okay=False),
        callback=_utf8_path,
        help=help,
    )


def db_options(func: F) -> F:
    func = click.option(
        "--run", "run", default="latest", show_default=True, metavar="ID|latest", help=_RUN_HELP
    )(func)
    return db_option()(func)


def load(db: str, run: str) -> tuple[str, pd.DataFrame]:
    from harness.report._loader import load_run

    return load_run(db, run)


def guarded(action: Callable[[], int]) -> int:
    """Run ``action``, turning bad input into exit 2 with a one-line message, and a full disk
    into exit 3 (nothing half-written is left: files are written whole or not at all)."""
    from harness.errors import HarnessError
    from harness.store._diskfull import is_disk_full

    try:
        with warnings.catch_warnings():
            # numpy's word for a sum past the largest float, shown as $inf (a cost edited into
            # the store): a line of numpy's source on the terminal (round 20, part B)
            warnings.filterwarnings("ignore", "overflow encountered", RuntimeWarning)
            return action()
    except ImportError as exc:
        fail(f"{exc}: install the report dependencies (pandas, scipy, statsmodels, duckdb)")
    except (HarnessError, OSError) as exc:
        if is_disk_full(exc):
            echo(f"error: the disk is full: {one_line(exc)}; free some space and run it again",
                 err=True)  # fmt: skip
            raise SystemExit(3) from None
        if isinstance(exc, OSError):
            where = f" ({exc.filename})" if exc.filename else ""
            fail(f"{exc.strerror or exc}{where}")
        fail(str(exc))


def check_out_dir(out: str) -> None:
    """Create ``out`` and prove it writable, or raise ConfigError naming it and the fix."""
    import tempfile

    from harness._files import file_kind
    from harness.errors import ConfigError

    with contextlib.suppress(OSError):  # /dev/null said only "cannot write there (File exists)"
        mode = os.stat(out).st_mode
        if not stat.S_ISDIR(mode):
            raise ConfigError(f"--out {out}: is {file_kind(mode)}, not a folder; pass a folder")
    try:
        Path(out).mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out, prefix=".harness-probe-"):
            pass
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ConfigError(
            f"--out {out}: cannot write there ({reason}); pass a writable folder"
        ) from None


def baseline_arg(db: str, value: str) -> tuple[Baseline | pd.DataFrame, str]:
    """``--baseline``: a baseline JSON file, else a run id in the database."""
    from harness.report._baseline import load_baseline

    if value.endswith(".json") or (os.path.exists(value) and not os.path.isdir(value)):
        return load_baseline(value), value  # a FIFO or /dev/zero is refused there, never read
    run_id, frame = load(db, value)
    return frame, f"run {run_id}"
