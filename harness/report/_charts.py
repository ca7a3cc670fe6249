"""The report's charts as inline SVG, written by hand.

Inline SVG keeps ``report.html`` one self-contained file (no script, no stylesheet, no image to
fetch), vector-sharp, searchable and light: a chart is a few kilobytes whatever the number of
results, because every chart draws one mark per (mode, provider) group. Each mark carries a
``<title>`` so hovering shows the exact figures. No plotting library is needed, which keeps the
dependency footprint at pandas + scipy + statsmodels.

Each function returns one ``<figure class="chart">`` holding one ``<svg class="chart-svg">``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from harness.report._format import fmt_num, fmt_pct, fmt_usd, html_text, isnan

__all__ = [
    "finish_reason_chart",
    "iterations_chart",
    "pass_rate_chart",
]

WIDTH = 580
LEFT = 165  # the least room for "mode / provider" labels; longer labels widen the chart
RIGHT = 100
CHAR_W = 7.2  # an upper bound of a 12px system-ui character's width
POINT_CHAR_W = 6.6  # the same for the scatter's 11px point labels
ROW = 28
TOP = 16
AXIS = 34
MODE_COLORS = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1")
REASON_COLORS = {"stop": "#59a14f", "submitted": "#8cd17d", "unknown": "#bab0ac"}
OTHER_COLORS = (
    "#e15759",
    "#f28e2b",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#4e79a7",
    "#76b7b2",
    "#d37295",
    "#fabfd2",
    "#79706e",
    "#86bcb6",
)


def _figure(chart_id: str, title: str, note: str, width: int, height: int, body: str) -> str:
    return (
        f'<figure class="chart" id="{chart_id}">'
        f"<figcaption><strong>{html_text(title)}</strong> "
        f"<span>{html_text(note)}</span></figcaption>"
        f'<svg class="chart-svg" role="img" aria-label="{html_text(title)}" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}">{body}</svg></figure>'
    )


def _text(x: float, y: float, text: str, anchor: str = "start", cls: str = "") -> str:
    c = f' class="{cls}"' if cls else ""
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{c}>{html_text(text)}</text>'


def _line(x1: float, y1: float, x2: float, y2: float, cls: str) -> str:
    return f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" class="{cls}"/>'


def _rect(x: float, y: float, w: float, h: float, fill: str, tip: str) -> str:
    return (
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(w, 0):.1f}" height="{h:.1f}" '
        f'fill="{fill}"><title>{html_text(tip)}</title></rect>'
    )


def nice_range(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering ``low`` .. ``high`` (about ``count`` intervals)."""
    if not (math.isfinite(low) and math.isfinite(high) and high > low):
        return [0.0, 1.0]
    raw = (high - low) / count
    if not math.isfinite(raw):  # 1.7e308 - -1.7e308 (a store edited by hand; round 20 B)
        return [low, high]
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.floor(low / step + 1e-9)
    last = math.ceil(high / step - 1e-9)
    return [round(i * step, 12) for i in range(first, last + 1)]


def nice_ticks(top: float, count: int = 5) -> list[float]:
    """Round tick values from 0 to at least ``top``."""
    return nice_range(0.0, top, count) if top > 0 else [0.0, 1.0]


def mode_colors(modes: Sequence[str]) -> dict[str, str]:
    """A stable color per mode (alphabetical order)."""
    return {m: MODE_COLORS[i % len(MODE_COLORS)] for i, m in enumerate(sorted(set(modes)))}


def _x_axis(ticks: Sequence[float], scale: float, y: float, label: str, fmt: str) -> str:
    out = []
    for t in ticks:
        x = LEFT + t * scale
        out.append(_line(x, TOP, x, y, "grid"))
        tick = f"{t:.0%}" if fmt == "pct" else f"{t:g}"
        out.append(_text(x, y + 14, tick, "middle", "tick"))
    out.append(_text(LEFT + (ticks[-1] * scale) / 2, y + 30, label, "middle", "axis"))
    return "".join(out)


def _usd_tick(value: float) -> str:
    text = fmt_usd(value)
    return text.rstrip("0").rstrip(".") if "." in text else text


def _label(row: pd.Series) -> str:
    return f"{row['mode']} / {row['provider']}"


def _labelled(
    chart_id: str, title: str, note: str, height: int, body: str, frame: pd.DataFrame
) -> str:
    """A bar chart whose rows are labelled "mode / provider" left of the plot: the chart is
    widened (and its marks shifted right) so that the longest label fits, never cut."""
    longest = max((len(_label(r)) for _, r in frame.iterrows()), default=0)
    shift = max(0, math.ceil(CHAR_W * longest) + 16 - LEFT)
    if shift:
        body = f'<g transform="translate({shift},0)">{body}</g>'
    return _figure(chart_id, title, note, WIDTH + shift, height, body)


def pass_rate_chart(summary: pd.DataFrame) -> str:
    """Horizontal bars: pass rate per (mode, provider) with its 95% Wilson interval."""
    colors = mode_colors(summary["mode"].tolist())
    plot_w = WIDTH - LEFT - RIGHT
    y_axis = TOP + ROW * len(summary)
    parts = [_x_axis([0, 0.25, 0.5, 0.75, 1.0], plot_w, y_axis, "pass rate (95% Wilson CI)", "pct")]
    for i, (_, r) in enumerate(summary.iterrows()):
        y = TOP + i * ROW
        mid = y + ROW / 2
        tip = (
            f"{_label(r)}: {r['passed']}/{r['n']} = {fmt_pct(r['pass_rate'], 1)} "
            f"(95% CI {fmt_pct(r['pass_ci_low'], 1)}–{fmt_pct(r['pass_ci_high'], 1)})"
        )
        parts.append(_text(LEFT - 8, mid + 4, _label(r), "end"))
        parts.append(_rect(LEFT, y + 5, r["pass_rate"] * plot_w, ROW - 10, colors[r["mode"]], tip))
        lo, hi = LEFT + r["pass_ci_low"] * plot_w, LEFT + r["pass_ci_high"] * plot_w
        parts.append(_line(lo, mid, hi, mid, "whisker"))
        parts += [_line(x, mid - 6, x, mid + 6, "whisker") for x in (lo, hi)]
        parts.append(_text(WIDTH - RIGHT + 8, mid + 4, f"{fmt_pct(r['pass_rate'])} of {r['n']:,}"))
    note = "bars: pass rate; whiskers: 95% Wilson interval"
    body = "".join(parts)
    return _labelled("chart-pass-rate", "Pass rate", note, y_axis + AXIS + 8, body, summary)


def reason_colors(reasons: Sequence[str]) -> dict[str, str]:
    """Greens for success, grey for unknown, distinct warm colors for the rest."""
    out: dict[str, str] = {}
    others = iter(OTHER_COLORS * (1 + len(reasons) // len(OTHER_COLORS)))
    for r in reasons:
        out[r] = REASON_COLORS.get(r) or next(others)
    return out


def finish_reason_chart(finish: pd.DataFrame) -> str:
    """100% stacked bars: the finish-reason mix of each (mode, provider)."""
    reasons = [c for c in finish.columns if c not in ("mode", "provider")]
    colors = reason_colors(reasons)
    plot_w = WIDTH - LEFT - RIGHT
    y_axis = TOP + ROW * len(finish)
    parts = [_x_axis([0, 0.25, 0.5, 0.75, 1.0], plot_w, y_axis, "share of cells", "pct")]
    for i, (_, r) in enumerate(finish.iterrows()):
        y = TOP + i * ROW
        total = float(sum(r[c] for c in reasons)) or 1.0
        parts.append(_text(LEFT - 8, y + ROW / 2 + 4, _label(r), "end"))
        x = float(LEFT)
        for reason in reasons:
            share = r[reason] / total
            tip = f"{_label(r)}: {reason} {int(r[reason])} of {int(total)} ({share:.0%})"
            parts.append(_rect(x, y + 5, share * plot_w, ROW - 10, colors[reason], tip))
            x += share * plot_w
    legend_y = y_axis + AXIS + 14
    x = 20.0
    for reason in reasons:
        if x + 16 + 7 * len(reason) > WIDTH - 10:
            x, legend_y = 20.0, legend_y + 20
        parts.append(_rect(x, legend_y - 10, 12, 12, colors[reason], reason))
        parts.append(_text(x + 16, legend_y, reason, "start", "legend"))
        x += 16 + 7 * len(reason) + 18
    note = "share of each finish reason"
    body = "".join(parts)
    return _labelled("chart-finish-reasons", "Finish reasons", note, legend_y + 12, body, finish)


def iterations_chart(stats: pd.DataFrame) -> str:
    """Box plots of iterations per (mode, provider): whiskers min–max, box quartiles, median
    line, mean dot. ``stats`` has mode, provider, n, min, q1, median, q3, max, mean."""
    colors = mode_colors(stats["mode"].tolist())
    plot_w = WIDTH - LEFT - RIGHT
    y_axis = TOP + ROW * len(stats)
    ticks = nice_ticks(float(stats["max"].max()) if len(stats) else 1.0)
    scale = plot_w / ticks[-1]
    parts = [_x_axis(ticks, scale, y_axis, "iterations per cell", "num")]
    for i, (_, r) in enumerate(stats.iterrows()):
        y, mid = TOP + i * ROW, TOP + i * ROW + ROW / 2
        parts.append(_text(LEFT - 8, mid + 4, _label(r), "end"))
        if isnan(r["median"]):
            parts.append(_text(LEFT + 4, mid + 4, "no iterations recorded", "start", "tick"))
            continue
        px = {k: LEFT + float(r[k]) * scale for k in ("min", "q1", "median", "q3", "max", "mean")}
        tip = (
            f"{_label(r)}: min {fmt_num(r['min'], 0)}, q1 {fmt_num(r['q1'])}, median "
            f"{fmt_num(r['median'])}, q3 {fmt_num(r['q3'])}, max {fmt_num(r['max'], 0)}, "
            f"mean {fmt_num(r['mean'], 2)} (n={int(r['n'])})"
        )
        parts.append(_line(px["min"], mid, px["max"], mid, "whisker"))
        parts += [_line(px[k], mid - 6, px[k], mid + 6, "whisker") for k in ("min", "max")]
        parts.append(_rect(px["q1"], y + 6, px["q3"] - px["q1"], ROW - 12, colors[r["mode"]], tip))
        parts.append(_line(px["median"], y + 4, px["median"], y + ROW - 4, "median"))
        parts.append(f'<circle cx="{px["mean"]:.1f}" cy="{mid:.1f}" r="3" class="mean"/>')
        parts.append(_text(WIDTH - RIGHT + 8, mid + 4, f"median {fmt_num(r['median'])}"))
    note = "box: quartiles; line: median; dot: mean; whiskers: min–max"
    body = "".join(parts)
    return _labelled("chart-iterations", "Iterations", note, y_axis + AXIS + 8, body, stats)
