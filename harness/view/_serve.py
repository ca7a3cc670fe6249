"""Serving the viewer with uvicorn on a local address."""

from __future__ import annotations

from harness.view._app import ViewConfig, create_app

__all__ = ["serve"]


def serve(config: ViewConfig, host: str = "127.0.0.1", port: int = 8765) -> None:
    """Serve the viewer until interrupted (Ctrl-C)."""
    import uvicorn

    uvicorn.run(create_app(config), host=host, port=port, log_level="warning")
