"""Serving the viewer with uvicorn on a local address."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from pathlib import Path

from harness.view._app import ViewConfig, create_app

__all__ = ["serve"]


def serve(
    config: ViewConfig,
    host: str = "127.0.0.1",
    port: int = 8765,
    on_listen: Callable[[str], None] | None = None,
    *,
    warm_runs: int = 3,
    warm_budget_s: float = 30.0,
    on_status: Callable[[str], None] | None = None,
    sock: socket.socket | None = None,
) -> None:
    """Serve the viewer until interrupted (Ctrl-C). The socket is bound here, so ``on_listen``
    gets the URL with the port really listened on (``port=0`` picks a free one).

    Before the URL is given, what every page's first request would otherwise pay for is done
    here, so that a first visit costs what a later one does: the statistics stack is imported
    (pandas, scipy, the report: about a second), the templates compiled, and the newest
    ``warm_runs`` runs' summaries, charts, filter values, searchable transcripts and reports
    computed (:func:`harness.view._pages.warm_up`; about 2 s a run at 10,000 cells). Past
    ``warm_budget_s`` the URL is given and the remaining runs are prepared in the background.
    ``on_status`` hears what is being done meanwhile. ``sock``: a socket already listening
    (:func:`harness.view._bind.bind`), used instead of binding ``host:port`` here."""
    import time

    from harness.view._bind import bind

    if sock is None:
        sock = bind(host, port)
    family = sock.family
    try:
        import uvicorn

        from harness.view import _pages

        _pages.import_report_stack()
    except BaseException:
        sock.close()
        raise
    if warm_runs > 0:
        if on_status is not None:
            on_status(f"preparing the newest {warm_runs} runs' pages")
        started = time.monotonic()
        try:
            rest = _pages.warm_up(config.db, warm_runs, deadline=started + warm_budget_s)
        except KeyboardInterrupt:  # Ctrl-C before the URL: stopped, as uvicorn stops later
            sock.close()
            return
        if rest:
            threading.Thread(
                target=_warm_rest, args=(config.db, rest), name="harness-view-warm-up",
                daemon=True,
            ).start()  # fmt: skip
        if on_status is not None:
            on_status(f"prepared in {time.monotonic() - started:.1f} s")
    real = sock.getsockname()[1]
    shown = f"[{host.strip('[]')}]" if family == socket.AF_INET6 else host
    if on_listen is not None:
        on_listen(f"http://{shown}:{real}/")
    bound = host.strip("[]")
    allowed = config.allowed_hosts + ((bound,) if bound not in ("0.0.0.0", "::") else ())
    app = create_app(ViewConfig(config.db, config.trace_url, config.per_page, allowed))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()


def _warm_rest(db: Path, run_ids: list[str]) -> None:
    from harness.view import _pages

    for run_id in run_ids:
        try:
            _pages.warm_run(db, run_id)
        except Exception:  # the pages report errors; a warm-up only saves time
            continue
