"""Render a :class:`~harness.report._build.Report` as ``report.md`` and a self-contained
``report.html`` (inline CSS and inline SVG charts: no script, no stylesheet, no image, no font
to fetch, so it opens offline and as a CI artifact)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

import pandas as pd

from harness._files import write_atomic
from harness.report._build import Report
from harness.report._charts import finish_reason_chart, iterations_chart, pass_rate_chart
from harness.report._format import html_text, md_table, md_text
from harness.report._scatter import cost_scatter_chart
from harness.report._sections import Section, Table, report_sections
from harness.report._tables import ReportInputError

__all__ = [
    "CSS",
    "FORMATS",
    "render_charts",
    "render_charts_of",
    "render_html",
    "render_markdown",
    "write_report",
]

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;
margin:24px auto;max-width:1240px;padding:0 16px}
h1{font-size:24px;margin:0 0 4px}
h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #d0d7de}
.meta{color:#59636e;margin:0 0 16px}
table{border-collapse:collapse;margin:8px 0;font-size:13px}
th,td{border:1px solid #d0d7de;padding:4px 8px;vertical-align:top}
th{background:#f6f8fa;text-align:left}td.r{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
ul.verdicts li{margin:4px 0}.note{color:#59636e;font-size:13px}
ul.headlines{padding-left:20px}ul.headlines li{margin:0 0 10px}
strong.headline{font-size:15px}p.sentence{margin:2px 0 0;color:#59636e;font-size:13px}
.charts{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}
figure.chart{margin:0;flex:0 1 auto;border:1px solid #d0d7de;border-radius:6px;padding:8px;
background:#fff}
figcaption{margin:0 0 4px;max-width:580px}figcaption span{color:#59636e;font-size:12px}
svg text{font:12px system-ui,sans-serif;fill:#1f2328}svg text.tick{fill:#59636e;font-size:11px}
svg text.axis{fill:#59636e}svg text.rot{transform-box:fill-box;transform-origin:center;
transform:rotate(-90deg)}svg text.point{font-size:11px}
svg .grid{stroke:#eaeef2}svg .whisker{stroke:#1f2328;stroke-width:1.5}
svg .median{stroke:#1f2328;stroke-width:2.5}svg .mean{fill:#fff;stroke:#1f2328}
.frame{max-width:100%;overflow:auto}.frame.long{max-height:70vh;border:1px solid #d0d7de}
.frame.long table{margin:0}.frame.long thead th{position:sticky;top:0}
svg.chart-svg{max-width:100%;height:auto}
td.chips{font-family:ui-monospace,monospace;letter-spacing:2px;white-space:nowrap}
b.ok{color:#1a7f37}b.ko{color:#cf222e}b.er{color:#9a6700}
""".strip()


def _md_section(s: Section, report: Report | None = None) -> str:
    parts = [f"## {md_text(s.title)}", ""]
    parts += [md_text(p) + "\n" for p in s.intro]
    if s.bullets:
        parts += [f"- {md_text(b)}" for b in s.bullets] + [""]
    for head, text in s.items:  # the headline in bold, the full text beneath it
        parts += [f"- **{md_text(head)}**", "", f"  {md_text(text)}", ""]
    if s.table is not None:
        parts += [md_table(s.table.headers, s.table.rows, s.table.align), ""]
    parts += [f"_{md_text(p)}_\n" for p in s.outro]
    note = None if report is None else _viewer_note(s, report)
    if note is not None:
        parts.append(f"_{md_text(note)}_\n")
    return "\n".join(parts)


def _meta(report: Report) -> str:
    runs = ", ".join(report.run_ids) if report.run_ids else "(no run id)"
    return f"Run {runs} · {report.n_results:,} results · generated {report.generated_at}"


def render_markdown(report: Report) -> str:
    """Markdown for terminals and PR comments (GitHub-flavoured tables, no charts)."""
    parts = [f"# {md_text(report.title)}", "", md_text(_meta(report)), ""]
    parts += [_md_section(s, report) for s in report_sections(report)]
    return "\n".join(parts).rstrip() + "\n"


_CHIP_HTML = {"✓": '<b class="ok">✓</b>', "✗": '<b class="ko">✗</b>', "!": '<b class="er">!</b>'}


def _chips(text: str) -> str:
    """A grid cell's outcome characters, colored (the text is only ✓, ✗, ! and –)."""
    return "".join(_CHIP_HTML.get(ch, html_text(ch)) for ch in text)


def _breakable(text: str) -> str:
    """Escaped ``text`` that may wrap after an underscore (``error_<wbr>no_<wbr>progress``):
    finish reasons and other snake_case names, the widest words of a table."""
    return html_text(text).replace("_", "_<wbr>")


def _html_table(t: Table, chips: bool = False) -> str:
    """``t`` as an HTML table; an ``r`` column is right-aligned and never wraps, a ``w`` column
    wraps after underscores too (so a long finish reason does not widen the table)."""
    align = t.align[: len(t.headers)].ljust(len(t.headers), "l")
    head = "".join(f"<th>{_breakable(h)}</th>" for h in t.headers)
    body = []
    for row in t.rows:
        cells = "".join(
            f'<td class="r">{html_text(c)}</td>'
            if a == "r"
            else f"<td>{_breakable(c)}</td>"
            if a == "w"
            else f'<td class="chips">{_chips(c)}</td>'
            if chips and i > 0
            else f"<td>{html_text(c)}</td>"
            for i, (c, a) in enumerate(zip(row, align, strict=True))
        )
        body.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _inline(text: str) -> str:
    """Escape ``text``; Markdown code spans become ``<code>``."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html_text(text))


#: Sections whose table can run long: shown in a frame that scrolls by itself.
_LONG = frozenset({"task-grid", "failures"})


def _hidden(s: Section, report: Report) -> int:
    """How many rows of a long section the report leaves out (0 for the other sections)."""
    if s.key == "failures" and report.failures is not None:
        return max(0, len(report.failures) - len(s.table.rows if s.table else ()))
    if s.key == "task-grid" and report.grid is not None:
        return max(0, len(report.grid) - len(s.table.rows if s.table else ()))
    return 0


def _viewer_note(s: Section, report: Report) -> str | None:
    """For a static report whose long section was cut: where the viewer lists every row."""
    if not _hidden(s, report) or len(report.run_ids) != 1:
        return None
    where = "?status=failed" if s.key == "failures" else ""
    return (
        f"{_hidden(s, report):,} more not shown: `harness view` lists them all "
        f"(`/runs/{report.run_ids[0]}{where}`, filtered and searchable, each with its transcript)."
    )


def _viewer_links(s: Section, report: Report, viewer: str | None) -> list[str]:
    """Where the viewer lists what a long section leaves out (one run only): links when the
    report is served by the viewer, else the page to open in it when rows were cut."""
    if s.key not in _LONG or len(report.run_ids) != 1:
        return []
    if viewer is None:
        note = _viewer_note(s, report)
        return [] if note is None else [f'<p class="note viewer-link">{_inline(note)}</p>']
    run = html_text(quote(report.run_ids[0], safe=""), quote=True)
    base = html_text(viewer.rstrip("/"), quote=True)
    if s.key == "failures":
        n = 0 if report.failures is None else len(report.failures)
        return [
            f'<p class="note viewer-link">Every one of the {n:,} cells, with its transcript: '
            f'<a href="{base}/runs/{run}?status=failed">failed</a> · '
            f'<a href="{base}/runs/{run}?status=error">errored</a> (in the viewer).</p>'
        ]
    return [f'<p class="note viewer-link"><a href="{base}/runs/{run}">The whole grid in the '
            "viewer</a>, filtered and searchable.</p>"]  # fmt: skip


def _html_section(s: Section, report: Report | None = None, viewer: str | None = None) -> str:
    parts = [f'<section id="{html_text(s.key)}"><h2>{html_text(s.title)}</h2>']
    parts += [f"<p>{_inline(p)}</p>" for p in s.intro]
    if s.bullets:
        items = "".join(f"<li>{_inline(b)}</li>" for b in s.bullets)
        parts.append(f'<ul class="verdicts">{items}</ul>')
    if s.items:
        items = "".join(
            f'<li><strong class="headline">{_inline(head)}</strong>'
            f'<p class="sentence">{_inline(text)}</p></li>'
            for head, text in s.items
        )
        parts.append(f'<ul class="verdicts headlines">{items}</ul>')
    if s.table is not None:
        frame = "frame long" if s.key in _LONG else "frame"
        table = _html_table(s.table, chips=s.key == "task-grid")
        parts.append(f'<div class="{frame}">{table}</div>')
    parts += [f'<p class="note">{_inline(p)}</p>' for p in s.outro]
    if report is not None:
        parts += _viewer_links(s, report, viewer)
    parts.append("</section>")
    return "".join(parts)


def render_charts(report: Report) -> list[str]:
    """The four charts, in display order (each one ``<figure class="chart">``)."""
    return render_charts_of(report.summary, report.finish_reasons, report.iterations)


def render_charts_of(
    summary: pd.DataFrame, finish_reasons: pd.DataFrame, iterations: pd.DataFrame
) -> list[str]:
    """The four charts from the summary, finish-reason and iteration frames."""
    return [
        pass_rate_chart(summary),
        cost_scatter_chart(summary),
        finish_reason_chart(finish_reasons),
        iterations_chart(iterations),
    ]


def render_html(report: Report, *, viewer: str | None = None) -> str:
    """A single self-contained HTML page: tables, verdicts and four inline SVG charts. Long
    tables (the task grid, the failing cells) scroll inside their own frame; with ``viewer``
    (the base URL of a ``harness view`` server, ``""`` for links within it) they link to the
    viewer's pages that list every row."""
    sections = report_sections(report)
    charts = "".join(render_charts(report)) if report.n_results else "<p>No results.</p>"
    body = [
        f"<h1>{html_text(report.title)}</h1>",
        f'<p class="meta">{html_text(_meta(report))}</p>',
        *(_html_section(s, report, viewer) for s in sections[:2]),
        f'<section id="charts"><h2>Charts</h2><div class="charts">{charts}</div></section>',
        *(_html_section(s, report, viewer) for s in sections[2:]),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html_text(report.title)}</title><style>{CSS}</style></head>"
        f"<body>{''.join(body)}</body></html>\n"
    )


#: What ``write_report`` can write: format -> (file name, renderer).
FORMATS = ("md", "html", "json")


def write_report(
    report: Report, out_dir: str | Path, formats: Sequence[str] = ("md", "html")
) -> dict[str, Path]:
    """Write ``report.md``, ``report.html`` and/or ``report.json`` (``formats``) into
    ``out_dir`` (created if needed); return format -> path."""
    from harness.report._json import render_json

    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise ReportInputError(
            f"unknown report format(s) {', '.join(unknown)}; known: md, html, json"
        )
    render = {"md": render_markdown, "html": render_html, "json": render_json}
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    for fmt in dict.fromkeys(formats):
        paths[fmt] = out / f"report.{fmt}"
        # whole or not at all (a full disk left a 4,096-byte report.html), never through a link
        write_atomic(paths[fmt], render[fmt](report))
    return paths
