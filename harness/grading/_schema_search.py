"""What the ``json_schema`` grader gives jsonschema: its patterns searched within a time limit,
and no reference fetched from outside the schema.

jsonschema searches a schema's ``pattern`` and ``patternProperties`` (also inside
``additionalProperties`` and ``unevaluatedProperties``) with stdlib ``re``, which backtracks for
ever holding the GIL: ``pattern: "^(a|aa)+$"`` over a reply of 46 ``a`` and a ``!`` took 284 s,
and neither the grader's time limit nor a SIGTERM stopped it (round 14's fault of the ``regex``
grader, through JSON Schema). Its default registry fetches a remote ``$ref``
(``http://...``, ``file:///...``) with ``urlopen`` and no timeout, at every grading: a server
that never answered held ``harness run`` (and its SIGTERM) until it closed (adversary round 20,
part B).

:func:`patterns_problem` checks a schema's patterns where the suite is read, as the ``regex``
grader's are (:func:`~harness.grading._patterns.pattern_problem`); :func:`bounded` runs a
validation with every search jsonschema makes done by ``regex`` (re's syntax) under one shared
budget of :data:`~harness.grading._patterns.REGEX_TIME_LIMIT_S` (a ``TimeoutError`` past it;
:func:`~harness.tools._schema_patterns.bounded`);
:data:`NO_FETCH` is the registry that resolves only what the schema holds.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any, TypeVar

import referencing

from harness.grading import _patterns
from harness.grading._patterns import pattern_problem
from harness.tools import _schema_patterns

__all__ = ["NO_FETCH", "bounded", "depth", "endless_problem", "patterns_problem"]

T = TypeVar("T")

#: A registry without retrieval: a ``$ref`` the schema does not hold is unresolvable.
NO_FETCH: referencing.Registry[Any] = referencing.Registry()

#: Keys whose values are data, not schemas (a ``pattern`` key there is no pattern).
_DATA = frozenset({"enum", "const", "default", "examples"})


def patterns_problem(schema: Any) -> str | None:
    """Why a pattern of ``schema`` (a ``pattern`` value, a ``patternProperties`` key) cannot be
    a grader's pattern (:func:`pattern_problem`), or None."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack += node
        if not isinstance(node, dict):
            continue
        found = [node["pattern"]] if isinstance(node.get("pattern"), str) else []
        if isinstance(node.get("patternProperties"), dict):
            found += [k for k in node["patternProperties"] if isinstance(k, str)]
        for pattern in found:
            if (problem := pattern_problem(pattern)) is not None:
                return problem
        stack += [v for k, v in node.items() if k not in _DATA]
    return None


def bounded(run: Callable[[], T], seconds: float | None = None) -> T:
    """``run()`` (a validation) with the patterns it searches bounded to ``seconds`` in all
    (default: :data:`~harness.grading._patterns.REGEX_TIME_LIMIT_S`; see
    :func:`~harness.tools._schema_patterns.bounded`)."""
    limit = _patterns.REGEX_TIME_LIMIT_S if seconds is None else seconds
    return _schema_patterns.bounded(run, limit)


#: Plain values a schema is tried on when it is read: one that refers to itself without
#: reading into the value (``{"$ref": "#"}``) recurses on each of them.
_PLAIN: tuple[Any, ...] = (None, True, 0, 0.5, "", [], {})


def endless_problem(validator: Any) -> str | None:
    """Why the schema of ``validator`` cannot validate anything: it recurses past Python's
    limit on a plain value (every grading was ``json_schema grader error: RecursionError``,
    adversary round 21, part B), or None."""
    for value in _PLAIN:
        try:
            bounded(functools.partial(validator.is_valid, value))
        except RecursionError:
            return f"it refers to itself without end (validating {json.dumps(value)} never ends)"
        except Exception:  # an unresolvable reference: said at grading
            continue
    return None


def depth(value: Any) -> int:
    """How deeply the JSON value ``value`` nests lists and objects (a scalar: 0)."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict):
            node = list(node.values())
        if isinstance(node, list):
            deepest = max(deepest, level + 1)
            stack += [(item, level + 1) for item in node]
    return deepest
