"""Serving the viewer with uvicorn on a local address."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable

from harness.view._app import ViewConfig, create_app

__all__ = ["serve"]


def serve(
    config: ViewConfig,
    host: str = "127.0.0.1",
    port: int = 8765,
    on_listen: Callable[[str], None] | None = None,
) -> None:
    """Serve the viewer until interrupted (Ctrl-C). The socket is bound here, so ``on_listen``
    gets the URL with the port really listened on (``port=0`` picks a free one).

    Before the URL is given, what every page's first request would otherwise pay for is done
    here: the statistics stack is imported (pandas, scipy, the report: about a second) and
    the templates compiled. Right after, a background thread computes the newest runs'
    summaries, charts and reports (:func:`harness.view._pages.warm_up`)."""
    import uvicorn

    from harness.view import _pages

    _pages.import_report_stack()

    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
        sock.listen(128)
        sock.set_inheritable(True)
    except BaseException:
        sock.close()
        raise
    real = sock.getsockname()[1]
    shown = f"[{host.strip('[]')}]" if family == socket.AF_INET6 else host
    if on_listen is not None:
        on_listen(f"http://{shown}:{real}/")
    bound = host.strip("[]")
    allowed = config.allowed_hosts + ((bound,) if bound not in ("0.0.0.0", "::") else ())
    app = create_app(ViewConfig(config.db, config.trace_url, config.per_page, allowed))
    threading.Thread(
        target=_pages.warm_up, args=(config.db,), name="harness-view-warm-up", daemon=True
    ).start()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
