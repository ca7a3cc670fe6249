"""The ``harness view`` web app: a read-only Starlette app over the results store, rendered with
Jinja2 templates (no JavaScript build step; one small vanilla script for the grid filters).

Every request opens the store read-only and closes it before answering, so a run that starts
writing later is not kept out; while a writer holds the DuckDB file, pages answer 503 with a
page that says so (:class:`~harness.errors.StoreLocked`), never a traceback. A request whose
``Host`` is not a loopback name or an allowed one gets 400 (DNS rebinding); query parameters out
of range are clamped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

import harness.store as b
from harness.errors import HarnessError, StoreLocked
from harness.store import Store
from harness.store._browse import run_facets
from harness.store._compare_runs import (
    COMPARE_SHOWS,
    compare_cells,
    compare_groups,
    matrix_differences,
)
from harness.telemetry._escape import escape_controls
from harness.view import _pages as pages
from harness.view._format import FILTERS, snapshot_facts
from harness.view._hosts import HostCheck

__all__ = ["DEFAULT_PER_PAGE", "MAX_PAGE", "ViewConfig", "create_app", "trace_url_problem"]

DEFAULT_PER_PAGE = 50
log = logging.getLogger("harness.view")
_STATIC = Path(__file__).parent / "static"


def trace_url_problem(url: str) -> str | None:
    """What is wrong with a ``--trace-url`` template, or None: it must be an ``http(s)://``
    address with a host and hold ``{trace_id}`` (``javascript:alert(1)//{trace_id}`` was
    rendered as a link that ran script)."""
    if "{trace_id}" not in url:
        return "put {trace_id} where the trace id goes"
    try:  # bytes from the command line that are not UTF-8 were rendered as a "\udcff" link
        url.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"not valid UTF-8 (character {exc.start}); give the address as text"
    try:  # "http://[::1/{trace_id}" was a ValueError traceback, exit 1
        parts = urlsplit(url.replace("{trace_id}", "0"))
        parts.port  # noqa: B018  # (checked when read: "http://x:99999/")
    except ValueError as exc:
        return f"not an address ({exc})"
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return "only http:// and https:// addresses (with a host) are accepted"
    return None


@dataclass(frozen=True, slots=True)
class ViewConfig:
    """What the app serves: the database, and the trace link template (``{trace_id}`` is
    replaced, e.g. ``http://localhost:16686/trace/{trace_id}``); ``allowed_hosts``: names the
    ``Host`` header may give besides the loopback ones (see :mod:`harness.view._hosts`)."""

    db: Path
    trace_url: str | None = None
    per_page: int = DEFAULT_PER_PAGE
    allowed_hosts: tuple[str, ...] = ()


def _shown(value: Any) -> Any:
    """What a page shows of a value: control and bidi characters of plain text (model replies,
    tool and task names) as escapes (``\x1b``, ``\u202e``), lines and tabs kept; markup the
    app made itself (charts) as it is. HTML escaping follows (autoescape)."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return escape_controls(value, keep="\n\t")
    return value


def _env() -> Environment:
    env = Environment(
        loader=PackageLoader("harness.view", "templates"),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_shown,
    )
    env.filters.update(FILTERS)
    return env


class _App:
    def __init__(self, config: ViewConfig) -> None:
        self.config = config
        self.env = _env()
        for name in self.env.list_templates(extensions=["html"]):  # compiled once, up front
            self.env.get_template(name)

    @contextmanager
    def store(self) -> Iterator[Store]:
        store = Store.open(self.config.db, read_only=True)
        try:
            yield store
        finally:
            store.close()

    def render(self, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        html = self.env.get_template(name).render(db=str(self.config.db), **context)
        return HTMLResponse(html, status_code=status)

    def guard(self, handler: Callable[[Request], Response]) -> Callable[[Request], Any]:
        """Run a page handler, turning a locked or unreadable store into a page that says so."""

        def endpoint(request: Request) -> Response:
            try:
                return handler(request)
            except StoreLocked as exc:
                return self.render("problem.html", 503, title="Store locked", locked=True,
                                   message=str(exc))  # fmt: skip
            except HarnessError as exc:
                return self.render("problem.html", 404, title="Not found", locked=False,
                                   message=str(exc))  # fmt: skip
            except Exception as exc:  # a database edited by hand: a 500 and a
                # traceback in the server's log before (a cell's calls that were no list)
                said = " ".join(f"{type(exc).__name__}: {exc}".split())[:500]
                log.warning(
                    "harness view: %s: %s", escape_controls(str(request.url)), escape_controls(said)
                )
                return self.render("problem.html", 500, title="Cannot show this page",
                                   locked=False, message=f"{said} (is the database edited by "
                                   "hand or damaged?)")  # fmt: skip

        return endpoint

    # --- pages ---------------------------------------------------------------------------------

    def runs(self, request: Request) -> Response:
        with self.store() as store:
            state = pages.run_state(store, None)
            runs = pages.cached(("runs", *state), lambda: b.runs_overview(store))
        return self.render("runs.html", title="Runs", runs=runs)

    def _filters(self, request: Request) -> b.GridFilters:
        q = request.query_params
        return b.GridFilters(
            suite=q.get("suite") or None,
            mode=q.get("mode") or None,
            provider=q.get("provider") or None,
            status=q.get("status") or None,
            finish_reason=q.get("finish_reason") or None,
            sort=q.get("sort") or "separating",
            q=(q.get("q") or "").strip()[:200] or None,
        )

    def run(self, request: Request) -> Response:
        run_id = request.path_params["run_id"]
        q = request.query_params
        filters = self._filters(request)
        page = _int(q.get("page"), 1)
        with self.store() as store:
            from harness.store import resolve_run_id

            run_id = resolve_run_id(store, run_id)
            state = pages.run_state(store, run_id)
            latest = pages.repeats(store, run_id, state)
            if filters.q:
                keys = pages.search(store, run_id, filters.q, latest)
                filters = replace(filters, keys=keys)
            (overview,) = b.runs_overview(store, 1, run_id, latest=latest)
            facets = pages.cached(
                ("facets", run_id, *state), lambda: run_facets(store, run_id, latest=latest)
            )
            grid = b.run_grid(store, run_id, filters, page, self.config.per_page, latest=latest)
            summary = pages.run_summary(store, run_id, filters)
        report = pages.run_report(self.config.db, run_id, state, wait=False)
        query = {k: v for k, v in q.items() if k != "page" and v}
        return self.render(
            "run.html",
            title=f"Run {run_id}",
            run=overview,
            facets=facets,
            filters=filters,
            grid=grid,
            summary=summary,
            verdict=None if report is None else pages.verdict(report),
            answers=q.get("answers") == "1",
            query=query,
            page_url=lambda n: "?" + urlencode({**query, "page": n}),
            toggle_url=lambda name, on: (
                "?"
                + urlencode(
                    {**{k: v for k, v in query.items() if k != name}, **({name: "1"} if on else {})}
                )
            ),
        )

    def verdict(self, request: Request) -> Response:
        """The run page's verdict section alone, once the run's report is built (202 while it
        is not: the page's script asks again)."""
        with self.store() as store:
            from harness.store import resolve_run_id

            run_id = resolve_run_id(store, request.path_params["run_id"])
            state = pages.run_state(store, run_id)
        report = pages.run_report(self.config.db, run_id, state, wait=False)
        if report is None:
            return HTMLResponse("", status_code=202)
        html = self.env.get_template("_verdict.html").render(
            run_id=run_id, verdict=pages.verdict(report)
        )
        return HTMLResponse(html)

    def report(self, request: Request) -> Response:
        with self.store() as store:
            from harness.store import resolve_run_id

            run_id = resolve_run_id(store, request.path_params["run_id"])
            html = pages.full_report(self.config.db, store, run_id)
        return HTMLResponse(html)

    def cell(self, request: Request) -> Response:
        run_id = request.path_params["run_id"]
        key = request.query_params.get("key", "")
        with self.store() as store:
            cell = b.cell_detail(store, run_id, key)
            if cell is None:
                raise HarnessError(f"no cell {key!r} in run {run_id!r}")
            spans = b.cell_spans(store, run_id, cell["trace_id"]) if cell["trace_id"] else []
        trace_link = None
        url = self.config.trace_url
        if url and cell["trace_id"] and trace_url_problem(url) is None:
            trace_link = url.replace("{trace_id}", cell["trace_id"])
        return self.render(
            "cell.html",
            title=key,
            cell=cell,
            spans=spans,
            waterfall=pages.waterfall(spans),
            trace_link=trace_link,
            snapshot=snapshot_facts(cell.get("no_progress_snapshot")),
        )

    def compare(self, request: Request) -> Response:
        params = request.query_params
        a, z = params.get("a", ""), params.get("b", "")
        show = params.get("show", "changed")
        show = show if show in COMPARE_SHOWS else "changed"
        with self.store() as store:
            from harness.store import resolve_run_id

            a, z = resolve_run_id(store, a), resolve_run_id(store, z)
            latest = any(pages.repeats(store, r, pages.run_state(store, r)) for r in (a, z))
            rows = compare_cells(store, a, z, latest=latest, show=show)
            groups = compare_groups(store, a, z, latest=latest)
            differences = matrix_differences(store, a, z)
        kinds = ("regressed", "fixed", "changed", "new", "missing")
        counts = {k: sum(int(g[k]) for g in groups) for k in kinds}
        counts = {k: n for k, n in counts.items() if n}
        total = sum(int(g["cells"]) for g in groups)
        unchanged = total - sum(counts.values())
        return self.render("compare.html", title=f"{a} vs {z}", a=a, b=z, rows=rows,
                           counts=counts, total=total, unchanged=unchanged, groups=groups,
                           differences=differences, show=show)  # fmt: skip


#: The largest page number asked for that is honoured (a larger one shows this page, empty).
MAX_PAGE = 1_000_000


def _int(value: str | None, default: int) -> int:
    """A positive page number: clamped to 1..MAX_PAGE; not a number gives ``default``."""
    try:
        return min(max(1, int(value)), MAX_PAGE) if value else default
    except ValueError:
        return default


def create_app(config: ViewConfig) -> Starlette:
    """The Starlette app serving ``config.db`` (read-only)."""
    app = _App(config)
    routes = [
        Route("/", app.guard(app.runs)),
        Route("/runs/{run_id}", app.guard(app.run)),
        Route("/runs/{run_id}/report", app.guard(app.report)),
        Route("/runs/{run_id}/verdict", app.guard(app.verdict)),
        Route("/runs/{run_id}/cell", app.guard(app.cell)),
        Route("/compare", app.guard(app.compare)),
        Mount("/static", StaticFiles(directory=_STATIC), name="static"),
    ]
    checked = [Middleware(HostCheck, allowed=config.allowed_hosts)]
    return Starlette(routes=routes, middleware=checked)
