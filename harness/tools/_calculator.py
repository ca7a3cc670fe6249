"""Safe arithmetic for the ``calculator`` tool: parsed with ``ast`` and walked, never ``eval``ed.

Numbers, ``+ - * / // % **``, unary signs, parentheses, a few math functions and the constants
``pi`` and ``e``. Huge exponents, huge integers, over-long expressions and too much arithmetic on
huge integers are refused with a :class:`~harness.errors.ToolError`, which the model sees as an
error result. The tool runs on the event loop, so its work is bounded up front: a budget of
:data:`MAX_WORK` limb operations per expression (multiplying and dividing integers costs the
product of their sizes in 30-bit limbs, a power the square of its result's). Without it, 16
divisions of a million-bit integer by a half-million-bit one in 480 characters held the loop for
25 s, and no timeout or Ctrl-C could be heard meanwhile.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

from harness._sync import parse_python
from harness.errors import ToolError

__all__ = ["MAX_WORK", "calculate"]

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
#: Limb operations one expression may cost (about 0.05 s of CPU here).
MAX_WORK = 50_000_000


def _eval(node: ast.AST, budget: list[int]) -> int | float:
    if isinstance(node, ast.Expression):
        return _eval(node.body, budget)
    if isinstance(node, ast.Constant):
        if isinstance(node.value, int | float) and not isinstance(node.value, bool):
            return node.value
        raise ToolError(f"only numbers are allowed, not {node.value!r}")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd | ast.USub):
        value = _eval(node.operand, budget)
        return -value if isinstance(node.op, ast.USub) else +value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = _eval(node.left, budget), _eval(node.right, budget)
        if isinstance(node.op, ast.Pow):
            if abs(right) > _MAX_EXPONENT and abs(left) not in (0, 1):
                raise ToolError(f"exponent too large (the limit is {_MAX_EXPONENT})")
            if isinstance(left, int) and isinstance(right, int) and right > 0:
                _check_bits(left.bit_length() * right)
        _charge(budget, node.op, left, right)
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
        values = [_eval(a, budget) for a in node.args]
        if fname == "round" and len(values) == 2 and not -100 <= values[1] <= 100:
            raise ToolError("round(x, n): n must be an integer from -100 to 100")
        return _number(fn(*values))
    raise ToolError(f"unsupported syntax: {type(node).__name__}")


def _charge(budget: list[int], op: ast.operator, left: object, right: object) -> None:
    """Take the cost of ``left op right`` on integers from ``budget`` before it is computed;
    past :data:`MAX_WORK` the expression is refused."""
    if not (isinstance(left, int) and isinstance(right, int)):
        return
    a, b = left.bit_length() // 30 + 1, right.bit_length() // 30 + 1
    if isinstance(op, ast.Mult):
        cost = a * b
    elif isinstance(op, ast.FloorDiv | ast.Mod):
        cost = (a - b + 1) * b if a >= b else 1
    elif isinstance(op, ast.Pow):
        small = abs(left) <= 1 or right <= 0 or right > _MAX_EXPONENT  # trivial, or refused
        cost = 1 if small else (left.bit_length() * right // 30 + 1) ** 2
    else:
        cost = a + b
    budget[0] -= cost
    if budget[0] < 0:
        raise ToolError(
            "too much arithmetic on huge numbers for one expression (the limit is "
            f"{MAX_WORK:,} limb operations); work with smaller numbers"
        )


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
        tree = parse_python(expression.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise ToolError(f"invalid expression: {getattr(exc, 'msg', None) or exc}") from None
    try:
        value = _eval(tree, [MAX_WORK])
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
