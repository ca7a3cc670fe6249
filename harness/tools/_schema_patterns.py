"""A jsonschema validation with every search of a schema's ``pattern`` (and
``patternProperties``) done by ``regex`` (re's syntax: :func:`searchable`) under one time budget,
for the ``json_schema`` grader and for ``extract_structured`` (the kernel, below the graders).

jsonschema searches them with stdlib ``re``, which backtracks for ever holding the GIL:
``^(a|aa)+$`` over 46 ``a`` and a ``!`` took 284 s in the ``json_schema`` grader (round 20 B),
and over 38 in ``extract_structured``, on the event loop, 35 s (adversary round 22, part A).
jsonschema's keyword modules see a ``re`` whose ``search`` is bounded while :func:`bounded`
runs, in its thread, and is stdlib's otherwise.
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any, TypeVar

import jsonschema._keywords
import jsonschema._legacy_keywords
import jsonschema._utils
import regex

from harness.tools._timed_patterns import searchable

__all__ = ["bounded"]

T = TypeVar("T")

_deadline = threading.local()


def _search(pattern: Any, string: Any, flags: int = 0) -> Any:
    """``re.search`` as jsonschema calls it, by ``regex`` within what is left of the budget."""
    until = getattr(_deadline, "at", None)
    if until is None or not isinstance(pattern, str):  # not ours to bound
        return re.search(pattern, string, flags)
    left = until - time.monotonic()
    if left <= 0:
        raise TimeoutError("the schema's patterns took too long")
    return regex.search(searchable(pattern), string, flags, timeout=left, concurrent=True)


class _TimedRe(ModuleType):
    """``re`` as jsonschema's keyword modules see it: ``search`` bounded, the rest as is."""

    search = staticmethod(_search)

    def __getattr__(self, name: str) -> Any:
        return getattr(re, name)


_TIMED = _TimedRe("re")
for _module in (jsonschema._keywords, jsonschema._utils, jsonschema._legacy_keywords):
    if getattr(_module, "re", None) is re:
        _module.re = _TIMED  # type: ignore[attr-defined]


@contextlib.contextmanager
def _budget(seconds: float) -> Iterator[None]:
    before = getattr(_deadline, "at", None)
    _deadline.at = time.monotonic() + seconds
    try:
        yield
    finally:
        _deadline.at = before


def bounded(run: Callable[[], T], seconds: float) -> T:
    """``run()`` (a validation) with the patterns it searches bounded to ``seconds`` in all (a
    ``TimeoutError`` past it). ``regex`` checks its limit coarsely: on a loaded machine the
    wall clock runs longer (3 s took 5.8 s at load 8, 10 s up to 50 s beside a test run of two
    workers)."""
    with _budget(seconds):
        return run()
