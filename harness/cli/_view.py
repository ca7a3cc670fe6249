"""``harness view``: serve the local web viewer over the results store (read-only).

Exit codes: 0 stopped (Ctrl-C), 2 bad input (no database, a bad --trace-url, the ``view``
extra not installed, an address it cannot listen on). It prints the URL it really listens on
(``--port 0`` picks a free port), warns loudly when bound beyond loopback, and answers only
requests naming it by a loopback name, the ``--host`` address or an ``--allow-host`` name.
"""

from __future__ import annotations

import click

from harness.cli._common import db_option, echo, fail, safe_text

__all__ = ["COMMANDS", "VIEW_INSTALL", "view"]

#: An install command that works where harness is used: from a checkout (the package is not on
#: PyPI under this name), in the environment that runs harness.
VIEW_INSTALL = (
    "python -m pip install 'starlette>=0.40' 'jinja2>=3.1' 'uvicorn>=0.30' "
    "(or, in a checkout: pip install -e '.[view]'; or: nox -s view)"
)


@click.command("view")
@db_option("The results database.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535))
@click.option(
    "--trace-url",
    default=None,
    metavar="TEMPLATE",
    help="Link each cell to its trace: an http(s) URL with {trace_id}, e.g. "
    "http://localhost:16686/trace/{trace_id} (Jaeger).",
)
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="NAME",
    help="Also answer requests whose Host header is NAME (repeatable); by default only "
    "127.0.0.1, localhost, [::1] and the --host address (against DNS rebinding).",
)
@click.option(
    "--warm",
    "warm_runs",
    default=3,
    show_default=True,
    type=click.IntRange(0, 100),
    help="Runs (newest first) whose pages are prepared before the URL is given, so that their "
    "first visit is as fast as the next; 0 gives the URL at once.",
)
def view(
    db: str,
    host: str,
    port: int,
    trace_url: str | None,
    allow_hosts: tuple[str, ...],
    warm_runs: int,
) -> None:
    """Browse runs, the task x mode grid, each cell's transcript and spans in a browser."""
    from pathlib import Path

    path = Path(db)
    if not path.is_file():
        fail(f"--db {db}: no results database there (`harness run` creates it)")
    if trace_url is not None:
        from harness.view._app import trace_url_problem

        if (problem := trace_url_problem(trace_url)) is not None:
            fail(f"--trace-url {trace_url}: {problem}")
    from harness.view._bind import bind

    try:  # bound before the viewer's stack is imported: a port in use is told at once
        sock = bind(host, port)
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    try:
        from harness.view import ViewConfig, serve
        from harness.view._hosts import is_loopback
    except ImportError as exc:
        sock.close()
        fail(f"{exc}: install the viewer's dependencies: {VIEW_INSTALL}")
    if not is_loopback(host):
        click.secho(
            safe_text(f"WARNING: --host {host}")
            + " serves the viewer beyond this machine, and it has no login: anyone who can "
            "reach this port reads every run, transcript and trace. "
            "Use --host 127.0.0.1 (the default) unless that is what you want.",
            err=True, fg="red", bold=True,
        )  # fmt: skip

    def listening(url: str) -> None:
        echo(f"harness view: {url} over {path} (Ctrl-C stops)", err=True)

    def status(text: str) -> None:
        echo(f"harness view: {text}", err=True)

    try:
        serve(ViewConfig(path.resolve(), trace_url, allowed_hosts=allow_hosts), host=host,
              port=port, on_listen=listening, warm_runs=warm_runs,
              on_status=status, sock=sock)  # fmt: skip
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")


#: The commands this module adds to the root group.
COMMANDS: tuple[click.Command, ...] = (view,)
