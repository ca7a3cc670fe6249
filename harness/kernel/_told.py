"""A plug-in's exception told as text in the run's task.

The text of an exception is its ``__str__``: a plug-in's code. Made in the run's task (to name
a tool's, a provider's or a mode's crash), one that cancelled that task left ``harness.run`` as
``CancelledError`` whatever had raised it: a tool, a provider's ``complete``, a mode's ``init``
or ``iterate`` (adversary round 18, part A). :func:`told` makes the text under the same
pending-cancel mark as the plug-in's other synchronous code
(:func:`~harness.kernel._isolated.ran`).
"""

from __future__ import annotations

from collections.abc import Callable

from harness._plugins import described
from harness.kernel._isolated import own, ran

__all__ = ["told"]


async def told(exc: BaseException, how: Callable[[BaseException], str] = described) -> str:
    """``how(exc)`` (the exception's type and message), or, when making that text cancelled
    the run's task, its type and a word saying so (the cancel undone); raising, a message that
    could not be read (Ctrl-C and ``SystemExit`` go on up, the cancel undone). A ``__str__``
    cancelling the run's task then raising (``ValueError`` for a provider's crash,
    ``GeneratorExit`` or ``CancelledError`` for any plug-in's) left ``harness.run`` as
    ``CancelledError``; raising ``GeneratorExit``, a mode's crash was the harness's internal
    error with a traceback (adversary round 19, part A)."""
    done, text = await ran(how, exc)
    if own(text):
        return f"{type(exc).__name__} (its message cancelled its run's task)"
    if not done:  # its own GeneratorExit or CancelledError too
        return f"{type(exc).__name__} (its message could not be read)"
    return text  # type: ignore[no-any-return]
