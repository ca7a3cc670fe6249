"""Jinja2 filters of the viewer's templates (numbers, money, times, JSON)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from datetime import datetime
from typing import Any

__all__ = ["FILTERS", "snapshot_facts", "usd"]


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def pct(value: Any) -> str:
    return "–" if _missing(value) else f"{float(value):.0%}"


def usd(value: Any, digits: int = 3) -> str:
    """Dollars with ``digits`` significant digits below $1 (``$0.000123``, never a rounded-away
    ``$0.0000``), cents from $1 up (``$1,234.57``); exactly zero is ``$0``."""
    if _missing(value):
        return "–"
    v = float(value)
    if v == 0:
        return "$0"
    sign, v = ("-" if v < 0 else ""), abs(v)
    if v >= 1:
        return f"{sign}${v:,.2f}"
    decimals = max(2, digits - 1 - math.floor(math.log10(v)))
    return f"{sign}${v:.{decimals}f}"


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


def _bare(value: Any) -> Any:
    """``value`` without its empty fields (``null``, ``""``, ``[]``, ``{}``), recursively."""
    if isinstance(value, dict):
        kept = {k: _bare(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v not in (None, "", [], {})}
    if isinstance(value, list):
        return [_bare(v) for v in value]
    return value


def _show(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def snapshot_facts(snapshot: Any) -> list[tuple[str, str]]:
    """A no-progress snapshot (the last messages before the kernel stopped, or an object) as
    (label, text) pairs to show: each message as its role and what it holds, empty fields
    (``null``, empty lists and objects) left out, nested values as compact JSON."""
    if isinstance(snapshot, str):
        try:
            snapshot = json.loads(snapshot)
        except ValueError:
            return [("snapshot", snapshot)]
    snapshot = _bare(snapshot)
    if isinstance(snapshot, list):
        out = []
        for i, item in enumerate(snapshot):
            if isinstance(item, dict):
                item = dict(item)
                role = str(item.pop("role", f"#{i + 1}"))
                if set(item) == {"content"}:
                    out.append((role, _show(item["content"])))
                elif item:
                    out.append((role, _show(item)))
            elif item not in (None, "", [], {}):
                out.append((f"#{i + 1}", _show(item)))
        return out
    if isinstance(snapshot, dict):
        return [(str(k).replace("_", " "), _show(v)) for k, v in snapshot.items()]
    return [] if snapshot in (None, "") else [("snapshot", _show(snapshot))]


def clip(value: Any, limit: int = 80) -> str:
    text = "" if value is None else " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def pts(value: Any) -> str:
    return "–" if _missing(value) else f"{100 * float(value):+.1f} pts"


def mdd(value: Any) -> str:
    """A minimum detectable difference as the report states it (whole points, rounded up,
    no sign: it is a size): 0.071 -> '8 pts'."""
    if _missing(value):
        return "–"
    from harness.report._compare import fmt_mdd  # the verdicts exist: the report is loaded

    return fmt_mdd(float(value))


FILTERS: dict[str, Callable[..., str]] = {
    "pct": pct,
    "usd": usd,
    "usd_delta": usd_delta,
    "num": num,
    "ms": ms,
    "when": when,
    "pretty_json": pretty_json,
    "clip": clip,
    "pts": pts,
    "mdd": mdd,
}
