"""``harness view``: a local, read-only web viewer over the results store (runs, a run's
task x mode grid, one cell's transcript and span waterfall, two runs compared).

Needs the ``view`` extra (``pip install 'athena-harness[view]'``: Starlette, Jinja2, uvicorn);
``import harness`` never imports this package.
"""

from __future__ import annotations

from harness.view._app import DEFAULT_PER_PAGE, ViewConfig, create_app
from harness.view._serve import serve

__all__ = ["DEFAULT_PER_PAGE", "ViewConfig", "create_app", "serve"]
