"""Tool calls <-> BFCL's call strings, without ever evaluating anything.

BFCL's multi-turn ground truth is a list of Python call strings per turn (``"cd(folder='doc')"``,
some with positional arguments), and its multi-turn checker ``eval()``s call strings built from
the model's calls. :func:`parse_call_string` reads a ground-truth string with :mod:`ast` (literal
arguments only). :func:`render_call` builds the string the checker will evaluate exactly as BFCL's
``convert_to_function_call`` does (``name(k=repr(v),...)``), but only from a name that matches
``^[A-Za-z_][A-Za-z0-9_.]*$`` and is one of the entry's functions, identifier keys, and JSON
values, and only when the result parses back to that one call with literal arguments; anything
else becomes :data:`REJECTED_CALL`, which fails to execute (a ``NameError``) with no effect.
"""

from __future__ import annotations

import ast
import keyword
import math
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any, NamedTuple, cast

from harness._sync import parse_python

__all__ = ["NAME_RE", "REJECTED_CALL", "ParsedCall", "parse_call_string", "render_call"]

NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")
#: What a refused call becomes: an undefined name, so BFCL's executor records an error result.
REJECTED_CALL = "harness_rejected_call()"


class ParsedCall(NamedTuple):
    name: str
    arguments: dict[str, Any]


def _json_value(value: Any) -> Any:
    """A literal as JSON would carry it (tuples become lists)."""
    if isinstance(value, tuple | list):
        return [_json_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _json_value(v) for k, v in value.items()}
    return value


def parse_call_string(text: str, docs: Sequence[Mapping[str, Any]]) -> ParsedCall:
    """``"sort('final_report.pdf')"`` -> ``ParsedCall("sort", {"file_name": "final_report.pdf"})``.

    Positional arguments take the names of the doc's parameters in order. Raises ``ValueError``
    for anything but one call of a plain name with literal arguments."""
    node = cast(ast.Expression, parse_python(text.strip(), mode="eval")).body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise ValueError(f"not a call of a plain name: {text!r}")
    name = node.func.id
    doc = next((d for d in docs if d["name"] == name), None)
    if doc is None:
        raise ValueError(f"{name!r} is not one of the entry's functions: {text!r}")
    params = list(doc.get("parameters", {}).get("properties", {}))
    if len(node.args) > len(params):
        raise ValueError(f"too many positional arguments: {text!r}")
    args: dict[str, Any] = {}
    for param, arg in zip(params, node.args, strict=False):
        args[param] = _json_value(ast.literal_eval(arg))
    for kw in node.keywords:
        if kw.arg is None:
            raise ValueError(f"**kwargs in a call string: {text!r}")
        args[kw.arg] = _json_value(ast.literal_eval(kw.value))
    return ParsedCall(name, args)


def _is_json(value: Any, depth: int = 0) -> bool:
    if depth > 64:
        return False
    if value is None or isinstance(value, bool | int | str):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_is_json(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json(v, depth + 1) for k, v in value.items())
    return False


def _is_literal_call(text: str, name: str, keys: Sequence[str]) -> bool:
    try:
        node = cast(ast.Expression, parse_python(text, mode="eval")).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    if not isinstance(node, ast.Call) or node.args:
        return False
    func: ast.expr = node.func
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name) or ".".join([func.id, *reversed(parts)]) != name:
        return False
    if [kw.arg for kw in node.keywords] != list(keys):
        return False
    try:
        for kw in node.keywords:
            ast.literal_eval(kw.value)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return False
    return True


def render_call(name: str, arguments: Any, allowed: Collection[str]) -> str:
    """The call string for BFCL's executor, or :data:`REJECTED_CALL` when the call is unsafe or
    not one of ``allowed`` (the entry's function names)."""
    if not isinstance(name, str) or not NAME_RE.fullmatch(name) or name not in allowed:
        return REJECTED_CALL
    if not isinstance(arguments, dict):
        return REJECTED_CALL
    keys = list(arguments)
    for key in keys:
        if not (isinstance(key, str) and key.isascii() and key.isidentifier()):
            return REJECTED_CALL
        if keyword.iskeyword(key):
            return REJECTED_CALL
    if not _is_json(arguments):
        return REJECTED_CALL
    text = f"{name}({','.join(f'{k}={v!r}' for k, v in arguments.items())})"
    return text if _is_literal_call(text, name, keys) else REJECTED_CALL
