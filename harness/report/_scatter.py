"""The cost-vs-pass-rate chart: one point per (mode, provider), each labelled at its point.

A label that cannot sit beside its point would sit somewhere else and mislead (a label near 50%
whose dot is at 0%). So every label is placed right next to its point or not at all: when every
"mode / provider" label fits beside its point without covering another point or label, the
points carry those labels; otherwise each point carries a number beside it (points at the same
place share one label, "3,4,5") and a key under the plot names the numbers.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from harness.report._charts import (
    POINT_CHAR_W,
    RIGHT,
    WIDTH,
    mode_colors,
    nice_range,
    nice_ticks,
)
from harness.report._charts import _figure as figure
from harness.report._charts import _label as group_label
from harness.report._charts import _line as line
from harness.report._charts import _text as text
from harness.report._charts import _usd_tick as usd_tick
from harness.report._format import fmt_pct, fmt_usd, html_text

__all__ = ["cost_scatter_chart", "label_spots"]

Box = tuple[float, float, float, float]
#: Points closer than this (px) share one numbered label.
SAME_PLACE = 4.0
KEY_ROW = 16


def _free(box: Box, boxes: Sequence[Box]) -> bool:
    return not any(
        b[0] < box[2] and box[0] < b[2] and b[1] < box[3] and box[1] < b[3] for b in boxes
    )


def label_spots(x: float, y: float, width: float) -> list[tuple[float, float]]:
    """Where a label of ``width`` px may start (text baseline) to sit beside a point at
    (``x``, ``y``) of radius 6: right, left, then above and below on either side."""
    return [
        (x + 9, y + 4),
        (x - 9 - width, y + 4),
        (x + 6, y - 9),
        (x + 6, y + 17),
        (x - 6 - width, y - 9),
        (x - 6 - width, y + 17),
    ]


def _box(lx: float, ly: float, width: float) -> Box:
    return (lx, ly - 10, lx + width, ly + 3)


def _inside(box: Box, area: Box) -> bool:
    return box[0] >= area[0] and box[1] >= area[1] and box[2] <= area[2] and box[3] <= area[3]


def _place_all(
    anchors: Sequence[tuple[float, float, float]], marks: Sequence[Box], area: Box, force: bool
) -> list[tuple[float, float]] | None:
    """A spot beside each anchor (x, y, label width) where its label covers no mark and no
    earlier label and stays in ``area``; None if one has none (with ``force``, the least bad
    spot beside it instead: inside the area, else right of the point)."""
    boxes = list(marks)
    out = []
    for x, y, width in anchors:
        spots = label_spots(x, y, width)
        fits = [s for s in spots if _inside(_box(*s, width), area)]
        spot = next((s for s in fits if _free(_box(*s, width), boxes)), None)
        if spot is None:
            if not force:
                return None
            spot = fits[0] if fits else spots[0]
        boxes.append(_box(*spot, width))
        out.append(spot)
    return out


def _groups(points: Sequence[tuple[float, float]]) -> list[list[int]]:
    """Indices of the points at (about) the same place, in order of their first point."""
    groups: list[list[int]] = []
    for i, (x, y) in enumerate(points):
        for g in groups:
            gx, gy = points[g[0]]
            if abs(gx - x) <= SAME_PLACE and abs(gy - y) <= SAME_PLACE:
                g.append(i)
                break
        else:
            groups.append([i])
    return groups


def _key(labels: Sequence[str], colors: Sequence[str], top: float) -> tuple[str, float]:
    """The key under the plot: "N  mode / provider" in as many columns as fit; returns the
    SVG and its height."""
    width = max(len(f"{len(labels)}  {s}") for s in labels) * POINT_CHAR_W + 24
    columns = max(1, int((WIDTH - 20) // width))
    rows = -(-len(labels) // columns)
    parts = []
    for i, (name, color) in enumerate(zip(labels, colors, strict=True)):
        x = 20 + (i // rows) * width
        y = top + (i % rows) * KEY_ROW + 12
        parts.append(f'<circle cx="{x + 4:.1f}" cy="{y - 4:.1f}" r="4" fill="{color}"/>')
        parts.append(text(x + 14, y, f"{i + 1}  {name}", "start", "point key"))
    return "".join(parts), rows * KEY_ROW + 8


def cost_scatter_chart(summary: pd.DataFrame) -> str:
    """Mean cost per cell (x) against pass rate (y), one point per (mode, provider)."""
    colors = mode_colors(summary["mode"].tolist())
    known = summary[summary["cost_known"] > 0]
    height, top, bottom, left = 360, 16, 310, 70
    right = WIDTH - RIGHT
    note = "x: mean cost per cell (known costs only); y: pass rate with 95% Wilson interval"
    if known.empty:
        body = text(WIDTH / 2, height / 2, "no cost is known for any cell", "middle", "axis")
        return figure("chart-cost-scatter", "Cost vs pass rate", note, WIDTH, height, body)
    low, high = float(known["cost_mean"].min()), float(known["cost_mean"].max())
    zoom = high - low < 0.25 * high  # from $0 the points would bunch up: show their range
    if zoom:
        pad = max((high - low) * 0.2, high * 0.01)
        ticks = nice_range(max(0.0, low - pad), high + pad)
        note += " (x axis does not start at $0)"
    else:
        ticks = nice_ticks(high * 1.05)
    x0 = ticks[0]
    sx = (right - left) / (ticks[-1] - x0)
    sy = bottom - top
    parts = []
    for t in ticks:
        x = left + (t - x0) * sx
        parts += [
            line(x, top, x, bottom, "grid"),
            text(x, bottom + 18, usd_tick(t), "middle", "tick"),
        ]
    for t in (0, 0.25, 0.5, 0.75, 1.0):
        y = bottom - t * sy
        tick = text(left - 6, y + 4 - (3 if t == 0 else 0), f"{t:.0%}", "end", "tick")
        parts += [line(left, y, right, y, "grid"), tick]
    parts.append(
        text((left + right) / 2, bottom + 36, "mean cost per cell (USD)", "middle", "axis")
    )
    parts.append(text(14, (top + bottom) / 2, "pass rate", "middle", "axis rot"))
    rows = [r for _, r in known.sort_values("pass_rate", ascending=False).iterrows()]
    xy = [(left + (r["cost_mean"] - x0) * sx, bottom - r["pass_rate"] * sy) for r in rows]
    for i, ((x, y), r) in enumerate(zip(xy, rows, strict=True)):
        lo, hi = bottom - r["pass_ci_low"] * sy, bottom - r["pass_ci_high"] * sy
        tip = (
            f"{group_label(r)}: pass {fmt_pct(r['pass_rate'], 1)}, mean cost "
            f"{fmt_usd(r['cost_mean'])} over {r['cost_known']} cell(s) with known cost"
        )
        parts.append(line(x, lo, x, hi, "whisker"))
        parts.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="6" fill="{colors[r["mode"]]}" '
            f'data-point="{i + 1}"><title>{html_text(tip)}</title></circle>'
        )
    marks = [(x - 6, y - 6, x + 6, y + 6) for x, y in xy]  # what labels must not cover
    area = (left + 2, 0.0, WIDTH - 4, bottom - 2)  # the plot: not over the ticks or titles
    names = [group_label(r) for r in rows]
    groups = _groups(xy)
    full = None
    if all(len(g) == 1 for g in groups):
        anchors = [(x, y, POINT_CHAR_W * len(n)) for (x, y), n in zip(xy, names, strict=True)]
        full = _place_all(anchors, marks, area, force=False)
    if full is not None:
        for i, ((lx, ly), name) in enumerate(zip(full, names, strict=True)):
            parts.append(text(lx, ly, name, "start", "point").replace(
                "<text ", f'<text data-point="{i + 1}" ', 1))  # fmt: skip
        return figure(
            "chart-cost-scatter", "Cost vs pass rate", note, WIDTH, height, "".join(parts)
        )
    numbers = [",".join(str(i + 1) for i in g) for g in groups]
    anchors = [(*xy[g[0]], POINT_CHAR_W * len(n)) for g, n in zip(groups, numbers, strict=True)]
    for (lx, ly), g, n in zip(_place_all(anchors, marks, area, force=True) or [], groups, numbers,
                              strict=True):  # fmt: skip
        parts.append(text(lx, ly, n, "start", "point").replace(
            "<text ", f'<text data-point="{g[0] + 1}" ', 1))  # fmt: skip
    key, key_height = _key(names, [colors[r["mode"]] for r in rows], bottom + 46)
    parts.append(key)
    note += "; numbers: the key below"
    total = int(height + key_height)
    return figure("chart-cost-scatter", "Cost vs pass rate", note, WIDTH, total, "".join(parts))
