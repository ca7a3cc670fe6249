"""``harness view``: a local, read-only web viewer over the results store (runs, a run's
task x mode grid, one cell's transcript and span waterfall, two runs compared).

Needs the ``view`` extra (``pip install -e '.[view]'`` in a checkout: Starlette, Jinja2, uvicorn);
``import harness`` never imports this package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness._exports import lazy_exports

if TYPE_CHECKING:
    from harness.view._app import ViewConfig as ViewConfig
    from harness.view._app import create_app as create_app
    from harness.view._serve import serve as serve

#: Loaded when first used: ``harness view`` binds its port (harness.view._bind) before the
#: viewer's stack is imported.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "harness.view._app": ("ViewConfig", "create_app"),
    "harness.view._serve": ("serve",),
}
__all__, __getattr__ = lazy_exports(__name__, _EXPORTS)
