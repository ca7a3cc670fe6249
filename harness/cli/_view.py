"""``harness view``: serve the local web viewer over the results store (read-only).

Exit codes: 0 stopped (Ctrl-C), 2 bad input (no database, a bad --trace-url, the ``view``
extra not installed).
"""

from __future__ import annotations

import click

from harness.cli._common import db_option, fail

__all__ = ["COMMANDS", "view"]


@click.command("view")
@db_option("The results database.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535))
@click.option(
    "--trace-url",
    default=None,
    metavar="TEMPLATE",
    help="Link each cell to its trace: a URL with {trace_id}, e.g. "
    "http://localhost:16686/trace/{trace_id} (Jaeger).",
)
def view(db: str, host: str, port: int, trace_url: str | None) -> None:
    """Browse runs, the task x mode grid, each cell's transcript and spans in a browser."""
    from pathlib import Path

    path = Path(db)
    if not path.is_file():
        fail(f"--db {db}: no results database there (`harness run` creates it)")
    if trace_url is not None and "{trace_id}" not in trace_url:
        fail(f"--trace-url {trace_url}: put {{trace_id}} where the trace id goes")
    try:
        from harness.view import ViewConfig, serve
    except ImportError as exc:
        fail(f"{exc}: install the viewer's dependencies: pip install 'athena-harness[view]'")
    click.echo(f"harness view: http://{host}:{port}/ over {path} (Ctrl-C stops)", err=True)
    serve(ViewConfig(path.resolve(), trace_url), host=host, port=port)


#: The commands this module adds to the root group.
COMMANDS: tuple[click.Command, ...] = (view,)
