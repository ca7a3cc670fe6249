"""Jinja2 filters of the viewer's templates (numbers, money, times, JSON)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from datetime import datetime
from typing import Any

__all__ = ["FILTERS"]


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def pct(value: Any) -> str:
    return "–" if _missing(value) else f"{float(value):.0%}"


def usd(value: Any) -> str:
    if _missing(value):
        return "–"
    v = float(value)
    return f"${v:.4f}" if abs(v) < 1 else f"${v:,.2f}"


def usd_delta(value: Any) -> str:
    return "–" if _missing(value) else f"{'+' if float(value) >= 0 else '-'}{usd(abs(value))}"


def num(value: Any, digits: int = 0) -> str:
    if _missing(value):
        return "–"
    return f"{float(value):,.{digits}f}"


def ms(value: Any) -> str:
    if _missing(value):
        return "–"
    v = float(value)
    return f"{v / 1000:.2f} s" if v >= 1000 else f"{v:.1f} ms" if v >= 1 else f"{v:.3f} ms"


def when(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if isinstance(value, datetime) else "–"


def pretty_json(value: Any) -> str:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return str(value)
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


FILTERS: dict[str, Callable[..., str]] = {
    "pct": pct,
    "usd": usd,
    "usd_delta": usd_delta,
    "num": num,
    "ms": ms,
    "when": when,
    "pretty_json": pretty_json,
}
