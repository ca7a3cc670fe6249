"""TOML parsing that fails only with :class:`tomllib.TOMLDecodeError`.

:func:`tomllib.loads` has two other ways out: a value nested some 1,000 levels deep (arrays or
inline tables, a few KB of text) raises ``RecursionError``, and an integer of more than 4,300
digits raises Python's own ``ValueError``. In ``harness.toml``, the gate's ``pyproject.toml`` and
``--provider-opt`` both were tracebacks (exit 1) instead of a one-line error naming the file.

This module is a leaf: it imports nothing from harness.
"""

from __future__ import annotations

import tomllib
from typing import Any

__all__ = ["loads_toml"]


def loads_toml(text: str) -> dict[str, Any]:
    """``tomllib.loads(text)``; every way the text cannot be read is a ``TOMLDecodeError``."""
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise tomllib.TOMLDecodeError("a value nested too deeply (arrays or tables)") from None
    except tomllib.TOMLDecodeError:
        raise
    except ValueError as exc:
        problem = (
            "an integer of more than 4,300 digits (Python's limit)"
            if "digits" in str(exc)
            else f"a value that cannot be read ({exc})"
        )
        raise tomllib.TOMLDecodeError(problem) from None
