"""report.md and report.html: content, self-containment, one element per chart, and a real render
in headless Chromium (skipped only when Chromium is not installed)."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import zlib
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from harness.report import build_report, render_html, render_markdown, write_report
from harness.report._charts import MODE_COLORS, REASON_COLORS, nice_ticks
from tests.browser import browser_page, chromium_path

Rows = Callable[..., pd.DataFrame]
CHART_IDS = ["chart-pass-rate", "chart-cost-scatter", "chart-finish-reasons", "chart-iterations"]


@pytest.fixture
def results(rows: Rows) -> pd.DataFrame:
    specs = []
    for i in range(12):
        specs.append(
            {
                "task_id": f"t{i}",
                "mode": "react",
                "passed": i % 3 != 0,
                "cost_usd": 0.010 + 0.001 * i,
                "iterations": 2 + i % 4,
                "finish_reason": "stop" if i % 3 else "error_max_turns",
            }
        )
        specs.append(
            {
                "task_id": f"t{i}",
                "mode": "reflexion",
                "passed": i % 4 != 0,
                "cost_usd": 0.020 + 0.001 * i,
                "iterations": 3 + i % 5,
                "finish_reason": "submitted" if i % 4 else "error_no_progress",
            }
        )
    return rows(*specs)


@pytest.fixture
def report_html(results: pd.DataFrame) -> str:
    base = results.copy()
    base.loc[0, "passed"] = True
    return render_html(build_report(results, base, title="Nightly <bench>"))


def test_markdown_has_every_section(results: pd.DataFrame) -> None:
    base = results.copy()
    base.loc[base["task_id"] == "t0", "passed"] = True
    md = render_markdown(build_report(results, base, baseline_label="reports/baseline.json"))
    # In plain characters: the HTML's "·", "×", "–" and "—" read "-", "x", "-" and "--".
    assert md.startswith("# harness report\n\nRun run-1 - 24 results - generated ")
    assert md.index("## Verdict") < md.index("## Pass rate and cost by mode x provider")
    for heading in (
        "## Pass rate and cost by mode x provider",
        "## Mode comparisons (paired)",
        "## pass@k and pass^k",
        "## Finish reasons",
        "## Against the baseline",
    ):
        assert heading in md
    assert "| react | live | 12 | 66.7% (8/12) | 39.1-86.2% | $0.0155 |" in md
    assert (
        "- reflexion vs react (live): +8.3 pts over 12 tasks, Holm-adjusted p=1 -- no evidence of "
        "a difference; detectable at 80% power over 12 tasks: " in md
    )
    assert "run with `--epochs 3` or more" in md
    assert "Against reports/baseline.json: 2 newly failing, 0 newly passing" in md
    assert "| newly failing | s/t0 [react, live, e0] |" in md
    assert "## Warnings" not in md


def test_markdown_lists_warnings(rows: Rows) -> None:
    md = render_markdown(build_report(rows({"cost_usd": None}, {"cost_usd": 0.5})))
    assert "## Warnings\n\n- results: 1 duplicate cell row(s)" in md
    assert "Only one mode ran: nothing to compare." in md


def test_html_is_self_contained(report_html: str) -> None:
    lowered = report_html.lower()
    assert "<script" not in lowered
    assert "<link" not in lowered
    assert "<img" not in lowered
    assert "@import" not in lowered
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", lowered)
    assert not re.search(r"url\(\s*['\"]?\s*(https?:)?//", lowered)
    assert "http://" not in lowered
    assert "https://" not in lowered


def test_html_has_one_element_per_chart(report_html: str) -> None:
    assert report_html.count('<figure class="chart"') == 4
    assert report_html.count('<svg class="chart-svg"') == 4
    for chart_id in CHART_IDS:
        assert report_html.count(f'id="{chart_id}"') == 1
    # The pass-rate chart: a bar and a whisker per (mode, provider), with exact tooltips.
    pass_chart = report_html.split('id="chart-pass-rate"')[1].split("</figure>")[0]
    assert pass_chart.count("<rect") == 2
    assert "react / live: 8/12 = 66.7% (95% CI 39.1%–86.2%)" in pass_chart


def test_html_escapes_user_text(report_html: str, rows: Rows) -> None:
    assert "<title>Nightly &lt;bench&gt;</title>" in report_html
    html = render_html(build_report(rows({"task_id": "<img src=x>", "mode": "<b>m</b>"})))
    assert "<img src=x>" not in html
    assert "<b>m</b>" not in html
    assert "&lt;b&gt;m&lt;/b&gt;" in html


def test_scatter_without_any_cost(rows: Rows) -> None:
    html = render_html(
        build_report(rows({"cost_usd": None}, {"task_id": "u", "mode": "b", "cost_usd": None}))
    )
    scatter = html.split('id="chart-cost-scatter"')[1].split("</figure>")[0]
    assert "no cost is known for any cell" in scatter
    assert html.count('<svg class="chart-svg"') == 4


def test_minimal_results_render() -> None:
    df = pd.DataFrame(
        {
            "suite": ["s"],
            "task_id": ["t"],
            "mode": ["m"],
            "provider": ["p"],
            "epoch": [0],
            "passed": [True],
        }
    )
    html = render_html(build_report(df))
    assert "no iterations recorded" in html
    assert "no cost is known for any cell" in html
    assert html.count('<svg class="chart-svg"') == 4


def test_empty_results_render(rows: Rows) -> None:
    html = render_html(build_report(rows({}).iloc[0:0]))
    assert "<p>No results.</p>" in html


def test_write_report(results: pd.DataFrame, tmp_path: Path) -> None:
    paths = write_report(build_report(results), tmp_path / "out")
    assert paths["md"].read_text().startswith("# harness report")
    assert paths["html"].read_text().startswith("<!DOCTYPE html>")


def test_nice_ticks() -> None:
    assert nice_ticks(0.0087) == pytest.approx([0, 0.002, 0.004, 0.006, 0.008, 0.01])
    assert nice_ticks(8) == [0, 2, 4, 6, 8]
    assert nice_ticks(0) == [0.0, 1.0]


# --- headless Chromium ----------------------------------------------------------------------------


def _png_pixels(path: Path) -> tuple[int, int, int, bytes]:
    """Decode an 8-bit RGB/RGBA non-interlaced PNG: (width, height, bytes per pixel, pixels)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        (size,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + size]
        pos += 12 + size
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
    width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert (depth, interlace) == (8, 0)
    assert color in (2, 6)
    bpp = 3 if color == 2 else 4
    raw, stride = zlib.decompress(idat), width * bpp
    out, prev = bytearray(), bytearray(stride)
    for y in range(height):
        kind, row = (
            raw[y * (stride + 1)],
            bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)]),
        )
        for i in range(stride):
            a = row[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                row[i] = (row[i] + a) & 255
            elif kind == 2:
                row[i] = (row[i] + b) & 255
            elif kind == 3:
                row[i] = (row[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                row[i] = (row[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out += row
        prev = row
    return width, height, bpp, bytes(out)


def _count_color(pixels: bytes, bpp: int, hex_color: str) -> int:
    rgb = bytes.fromhex(hex_color.lstrip("#"))
    return sum(1 for i in range(0, len(pixels), bpp) if pixels[i : i + 3] == rgb)


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_report_renders_in_headless_chromium(results: pd.DataFrame, tmp_path: Path) -> None:
    browser = chromium_path()
    html = write_report(build_report(results), tmp_path / "out")["html"]
    shot = tmp_path / "report.png"
    cmd = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
        f"--screenshot={shot}",
        "--window-size=1280,2000",
        html.resolve().as_uri(),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=150, check=False)
    assert shot.exists(), f"no screenshot; chromium exit {done.returncode}: {done.stderr[-2000:]}"
    keep = os.environ.get("HARNESS_SCREENSHOT_DIR")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / "report.png")
    width, height, bpp, pixels = _png_pixels(shot)
    assert (width, height) == (1280, 2000)
    # Bars, boxes and segments are solid fills in known colors: if the SVG did not render,
    # these pixels would not be there.
    react, reflexion = MODE_COLORS[0], MODE_COLORS[1]
    assert _count_color(pixels, bpp, react) > 2000, "react's bars/boxes are missing"
    assert _count_color(pixels, bpp, reflexion) > 2000, "reflexion's bars/boxes are missing"
    assert _count_color(pixels, bpp, REASON_COLORS["stop"]) > 1000, "finish-reason bars missing"
    assert _count_color(pixels, bpp, REASON_COLORS["submitted"]) > 1000


# --- labels that fit: measured in Chromium (Playwright) ------------------------------------------

#: Every pair of text boxes in a chart, measured by the browser: [chart id, i, j, overlap].
OVERLAPS_JS = """
() => {
  const found = [];
  for (const svg of document.querySelectorAll('svg.chart-svg')) {
    const id = svg.closest('figure').id;
    const boxes = [...svg.querySelectorAll('text')]
      .map(t => [t.textContent, t.getBoundingClientRect()]);
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length; j++) {
        const [ta, a] = boxes[i], [tb, b] = boxes[j];
        const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        if (w > 0.5 && h > 0.5) found.push([id, ta, tb, w, h]);
      }
    }
  }
  return found;
}
"""

#: Elements wider than the window (what would make the page scroll sideways).
OVERFLOW_JS = """
() => [...document.querySelectorAll('figure.chart, table, svg')]
  .filter(e => !e.closest('.frame') && e.getBoundingClientRect().right > window.innerWidth + 1)
  .map(e => e.id || e.tagName)
"""


#: Each scatter label and its point, by ``data-point``: [label, gap in px between their boxes].
LABEL_GAPS_JS = """
() => {
  const svg = document.querySelector('#chart-cost-scatter svg');
  return [...svg.querySelectorAll('text[data-point]')].map(t => {
    const c = svg.querySelector(`circle[data-point="${t.dataset.point}"]`);
    const a = t.getBoundingClientRect(), b = c.getBoundingClientRect();
    const dx = Math.max(0, a.left - b.right, b.left - a.right);
    const dy = Math.max(0, a.top - b.bottom, b.top - a.bottom);
    return [t.textContent, Math.hypot(dx, dy)];
  });
}
"""


def crowded(rows: Rows) -> pd.DataFrame:
    """12 (mode, provider) groups with long names, costs and pass rates close together: the
    scatter's labels have to dodge each other and the axis titles."""
    specs = []
    providers = ["llamacpp-gemma-3-270m-instruct", "openai-gpt-4o-mini", "anthropic-haiku", "mock"]
    for pi, provider in enumerate(providers):
        for mi, mode in enumerate(("react", "plan_and_solve", "reflexion")):
            for t in range(20):
                specs.append({
                    "task_id": f"t{t}", "mode": mode, "provider": provider,
                    "passed": (t + mi + pi) % (3 + mi) != 0,
                    "cost_usd": 0.0100 + 0.0002 * mi + 0.0001 * pi,
                    "iterations": 1 + (t + mi) % 6,
                    "finish_reason": ("stop", "error_no_progress", "error_max_turns",
                                      "submitted")[(t + mi) % 4],
                })  # fmt: skip
    return rows(*specs)


def _shot_dir() -> Path | None:
    keep = os.environ.get("HARNESS_SCREENSHOT_DIR")
    if not keep:
        return None
    Path(keep).mkdir(parents=True, exist_ok=True)
    return Path(keep)


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_chart_labels_do_not_overlap_in_chromium(rows: Rows, tmp_path: Path) -> None:
    """At 1,400 and 800 px, no two labels of a chart overlap (their boxes as laid out by
    Chromium), and nothing but a scrolling frame is wider than the window."""
    many = crowded(rows)
    html = write_report(build_report(many), tmp_path / "out")["html"]
    keep = _shot_dir()
    with browser_page() as page:
        for width in (1400, 800):
            page.set_viewport_size({"width": width, "height": 1000})
            page.goto(html.resolve().as_uri())
            assert page.locator("svg.chart-svg").count() == 4
            assert page.locator("svg.chart-svg text").count() > 60
            assert page.evaluate(OVERLAPS_JS) == []
            assert page.evaluate(OVERFLOW_JS) == []
            gaps = page.evaluate(LABEL_GAPS_JS)
            assert len(gaps) >= 1
            far = [g for g in gaps if g[1] > 6]  # a label sits beside its point, or not at all
            assert far == [], f"scatter labels away from their points at {width} px: {far}"
            if keep is not None:
                page.screenshot(path=str(keep / f"report-{width}.png"), full_page=False)
                page.locator("#charts").screenshot(path=str(keep / f"report-charts-{width}.png"))


def _scatter_of(html: str) -> str:
    return html.split('id="chart-cost-scatter"')[1].split("</figure>")[0]


def test_scatter_labels_name_their_point_when_they_fit(rows: Rows) -> None:
    """Three groups far apart: each point carries its "mode / provider" label, no key."""
    specs = [
        {"task_id": f"t{t}", "mode": mode, "passed": t < passes, "cost_usd": cost}
        for mode, passes, cost in (("a", 2, 0.01), ("b", 5, 0.05), ("c", 8, 0.09))
        for t in range(10)
    ]
    scatter = _scatter_of(render_html(build_report(rows(*specs))))
    labels = re.findall(r'<text data-point="(\d+)"[^>]*>([^<]*)</text>', scatter)
    assert sorted(name for _, name in labels) == ["a / live", "b / live", "c / live"]
    assert "numbers: the key below" not in scatter


def test_crowded_scatter_numbers_points_and_keys_every_group(rows: Rows) -> None:
    """12 groups bunched together: labels become numbers beside the points (points at one
    place share one label) and the key under the plot names every group once."""
    summary = build_report(crowded(rows)).summary
    scatter = _scatter_of(render_html(build_report(crowded(rows))))
    labels = re.findall(r'<text data-point="(\d+)"[^>]*>([^<]*)</text>', scatter)
    numbered = sorted(int(n) for _, text in labels for n in text.split(","))
    assert numbered == list(range(1, len(summary) + 1))
    keyed = re.findall(r'class="point key">(\d+)  ([^<]*)</text>', scatter)
    expected = {f"{r['mode']} / {r['provider']}" for _, r in summary.iterrows()}
    assert {name for _, name in keyed} == expected
    assert len(keyed) == len(expected)
