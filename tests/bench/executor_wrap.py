"""The executor plug-in factory the round 10 and 11 executor tests write into their plug-in
modules (``from tests.bench.executor_wrap import wrap``): ``body(options, sink, cells,
on_outcome)`` becomes an executor's ``run``; ``request_stop`` does nothing."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Body = Callable[[Any, Any, Any, Any], Awaitable[Any]]


def wrap(body: Body) -> Callable[[Any, Any, Any], Any]:
    """An executor factory ``(options, sink, context)`` whose executor runs ``body``."""

    def factory(options: Any, sink: Any, context: Any) -> Any:
        class Wrapper:
            def request_stop(self) -> None:
                pass

            async def run(self, cells: Any, on_outcome: Any = None) -> Any:
                return await body(options, sink, cells, on_outcome)

        return Wrapper()

    return factory
