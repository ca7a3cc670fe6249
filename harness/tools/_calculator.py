"""Safe arithmetic for the ``calculator`` tool: parsed with ``ast`` and walked, never ``eval``ed.

Numbers, ``+ - * / // % **``, unary signs, parentheses, a few math functions and the constants
``pi`` and ``e``. Huge exponents, huge integers and over-long expressions are refused with a
:class:`~harness.errors.ToolError`, which the model sees as an error result.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

from harness.errors import ToolError

__all__ = ["calculate"]

_BINOPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_FUNCS: dict[str, tuple[Callable[..., Any], int, int]] = {  # name -> (fn, min args, max args)
    "sqrt": (math.sqrt, 1, 1),
    "abs": (abs, 1, 1),
    "round": (round, 1, 2),
    "min": (min, 2, 50),
    "max": (max, 2, 50),
    "floor": (math.floor, 1, 1),
    "ceil": (math.ceil, 1, 1),
    "log": (math.log, 1, 2),
    "exp": (math.exp, 1, 1),
}
_CONSTS = {"pi": math.pi, "e": math.e}
_MAX_EXPR = 500
_MAX_EXPONENT = 10_000
_MAX_BITS = 1_000_000


def _eval(node: ast.AST) -> int | float:
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant):
        if isinstance(node.value, int | float) and not isinstance(node.value, bool):
            return node.value
        raise ToolError(f"only numbers are allowed, not {node.value!r}")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd | ast.USub):
        value = _eval(node.operand)
        return -value if isinstance(node.op, ast.USub) else +value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow):
            if abs(right) > _MAX_EXPONENT and abs(left) not in (0, 1):
                raise ToolError(f"exponent too large (the limit is {_MAX_EXPONENT})")
            if isinstance(left, int) and isinstance(right, int) and right > 0:
                _check_bits(left.bit_length() * right)
        return _number(_BINOPS[type(node.op)](left, right))
    if isinstance(node, ast.Name):
        if node.id in _CONSTS:
            return _CONSTS[node.id]
        raise ToolError(f"unknown name {node.id!r} (constants: pi, e)")
    if isinstance(node, ast.Call):
        fname = node.func.id if isinstance(node.func, ast.Name) else ""
        if fname not in _FUNCS or node.keywords:
            shown = repr(fname) if fname else "call"
            raise ToolError(f"unsupported function {shown} (functions: {', '.join(_FUNCS)})")
        fn, lo, hi = _FUNCS[fname]
        if not lo <= len(node.args) <= hi:
            raise ToolError(f"{fname}() takes {lo} to {hi} arguments, got {len(node.args)}")
        values = [_eval(a) for a in node.args]
        if fname == "round" and len(values) == 2 and not -100 <= values[1] <= 100:
            raise ToolError("round(x, n): n must be an integer from -100 to 100")
        return _number(fn(*values))
    raise ToolError(f"unsupported syntax: {type(node).__name__}")


def _check_bits(bits: int) -> None:
    if bits > _MAX_BITS:
        raise ToolError("result too large")


def _number(value: Any) -> int | float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ToolError("the result is not a real number")
    if isinstance(value, int):
        _check_bits(value.bit_length())
    return value


def calculate(expression: str) -> str:
    """Evaluate an arithmetic expression safely (``ast``, never ``eval``); the result text."""
    if len(expression) > _MAX_EXPR:
        raise ToolError(f"expression too long ({len(expression)} chars; the limit is {_MAX_EXPR})")
    if not expression.strip():
        raise ToolError("expression is empty")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise ToolError(f"invalid expression: {getattr(exc, 'msg', None) or exc}") from None
    try:
        value = _eval(tree)
    except ZeroDivisionError:
        raise ToolError("division by zero") from None
    except OverflowError:
        raise ToolError("result too large") from None
    except ValueError as exc:  # math domain errors
        raise ToolError(f"math error: {exc}") from None
    except (TypeError, RecursionError, MemoryError) as exc:
        raise ToolError(f"cannot evaluate: {type(exc).__name__}") from None
    if isinstance(value, float):
        return repr(value)
    try:
        return str(value)
    except ValueError:  # more digits than sys.get_int_max_str_digits()
        raise ToolError(
            f"result too large to print (~{value.bit_length() * 0.30103:.0f} digits)"
        ) from None
