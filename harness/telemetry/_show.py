"""``harness traces show FILE [--run ID]``: a run's span tree in the terminal.

Each node shows its span name, duration, tokens (chat spans) and cost; failed spans are red.
Text from the file (span and tool names, messages) is printed with control characters escaped
(``\\x1b[31m``), never raw: a tool name can hold terminal escape sequences.
``--run`` takes a trace id (or a unique prefix), a session id (``gen_ai.conversation.id``) or a
bench task (``task`` or ``suite/task``: every mode, provider and epoch of it). A file with many
runs and no ``--run`` gets a one-line-per-run table instead of trees: suite, task, mode,
provider, epoch, finish reason and pass (looked up by trace id in the results database, where
the grades are), never cut to the terminal's width.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.tree import Tree

from harness.telemetry import _conventions as c
from harness.telemetry._escape import escape_controls
from harness.telemetry._readspans import SpanRecord, read_spans

__all__ = [
    "MAX_DEPTH",
    "MAX_TREES",
    "grades_by_trace",
    "group_traces",
    "render_trace",
    "select_traces",
    "show_traces",
]

#: Above this many runs (and without --run), a summary table is printed instead of trees.
MAX_TREES = 10
#: Levels of a span tree shown; deeper spans are counted, not drawn.
MAX_DEPTH = 64


def _t(value: object) -> str:
    """``value`` as text safe for the terminal: control characters shown escaped (``\\x1b``),
    rich markup escaped."""
    return escape(escape_controls(str(value)))


def group_traces(spans: Sequence[SpanRecord]) -> dict[str, list[SpanRecord]]:
    """Spans by trace id, in order of each trace's first span."""
    traces: dict[str, list[SpanRecord]] = {}
    for s in spans:
        traces.setdefault(s.trace_id, []).append(s)
    return traces


def _roots(spans: Sequence[SpanRecord]) -> list[SpanRecord]:
    ids = {s.span_id for s in spans}
    return sorted(
        (s for s in spans if s.parent_span_id is None or s.parent_span_id not in ids),
        key=lambda s: s.start_ns,
    )


def _root_attr(spans: Sequence[SpanRecord], key: str) -> object:
    roots = _roots(spans)
    return (roots[0] if roots else spans[0]).attributes.get(key)


def select_traces(traces: dict[str, list[SpanRecord]], run: str) -> dict[str, list[SpanRecord]]:
    """The traces matching a trace id (prefix), a session id, or a bench task (``task`` or
    ``suite/task``, from the root's ``harness.suite`` / ``harness.task``)."""
    run = run.strip()
    tid = run.lower()
    hits = {t: s for t, s in traces.items() if t == tid}
    if not hits:
        hits = {t: s for t, s in traces.items() if t.startswith(tid)}
    if not hits:
        hits = {
            t: s
            for t, s in traces.items()
            if any(x.attributes.get(c.GEN_AI_CONVERSATION_ID) == run for x in s)
        }
    if not hits:
        hits = {
            t: s
            for t, s in traces.items()
            if run
            in (
                str(_root_attr(s, "harness.task")),
                f"{_root_attr(s, 'harness.suite')}/{_root_attr(s, 'harness.task')}",
            )
        }
    return hits


def _fmt_ms(ms: float) -> str:
    return f"{ms / 1000:.2f} s" if ms >= 1000 else f"{ms:.1f} ms" if ms >= 1 else f"{ms:.3f} ms"


def _label(s: SpanRecord) -> str:
    a = s.attributes
    style = "bold red" if s.is_error else "bold"
    parts = [f"[{style}]{_t(s.name)}[/]", f"[dim]{_fmt_ms(s.duration_ms)}[/]"]
    if c.GEN_AI_USAGE_INPUT_TOKENS in a or c.GEN_AI_USAGE_OUTPUT_TOKENS in a:
        inp = a.get(c.GEN_AI_USAGE_INPUT_TOKENS, 0)
        out = a.get(c.GEN_AI_USAGE_OUTPUT_TOKENS, 0)
        parts.append(f"[cyan]{inp}→{out} tok[/]")
    purpose = a.get(c.HARNESS_CALL_PURPOSE)
    if purpose and purpose != "main":
        parts.append(f"[magenta]{_t(str(purpose))}[/]")
    cost = a.get(c.HARNESS_COST_USD, a.get(c.HARNESS_RUN_COST_USD))
    if isinstance(cost, int | float):
        parts.append(f"[green]${cost:.4f}[/]")
    reason = a.get(c.HARNESS_RUN_FINISH_REASON)
    if reason:
        parts.append(f"[{'red' if s.is_error else 'green'}]{_t(str(reason))}[/]")
    if s.is_error and s.status_message and not reason:
        parts.append(f"[red]✗ {_t(s.status_message[:120])}[/]")
    if s.events:
        names: dict[str, int] = defaultdict(int)
        for e in s.events:
            names[e.name.rsplit(".", 1)[-1]] += 1
        parts.append("[dim]· " + ", ".join(f"{n}×{_t(k)}" for k, n in names.items()) + "[/]")
    return " ".join(parts)


def _totals(spans: Sequence[SpanRecord]) -> tuple[int, int, float | None]:
    inp = out = 0
    cost: float | None = None
    for s in spans:
        a = s.attributes
        inp += int(a.get(c.GEN_AI_USAGE_INPUT_TOKENS, 0) or 0)
        out += int(a.get(c.GEN_AI_USAGE_OUTPUT_TOKENS, 0) or 0)
        if isinstance(a.get(c.HARNESS_COST_USD), int | float):
            cost = (cost or 0.0) + float(a[c.HARNESS_COST_USD])
    return inp, out, cost


def render_trace(trace_id: str, spans: Sequence[SpanRecord]) -> Tree:
    """One trace as a rich Tree (children in start order)."""
    inp, out, cost = _totals(spans)
    head = f"[bold]trace {_t(trace_id)}[/] [dim]{len(spans)} spans[/] [cyan]{inp}→{out} tok[/]"
    if cost is not None:
        head += f" [green]${cost:.4f}[/]"
    tree = Tree(head)
    children: dict[str, list[SpanRecord]] = defaultdict(list)
    for s in spans:
        if s.parent_span_id is not None:
            children[s.parent_span_id].append(s)
    # An explicit stack and a depth bound: a file of spans 100,000 deep gave a RecursionError
    # traceback (and each level widens every line below it). Spans no root reaches (parents
    # in a cycle) are shown at the top, never left out.
    shown: set[int] = set()
    roots = _roots(spans)
    reached = _reached(roots, children)
    for root in [*roots, *(s for s in spans if id(s) not in reached)]:
        if id(root) in shown:
            continue
        stack: list[tuple[Tree, SpanRecord, int]] = [(tree, root, 0)]
        while stack:
            node, span, depth = stack.pop()
            if id(span) in shown:
                continue
            shown.add(id(span))
            branch = node.add(_label(span))
            below = sorted(children.get(span.span_id, ()), key=lambda x: x.start_ns)
            if below and depth + 1 >= MAX_DEPTH:
                hidden = len(_reached(below, children))
                branch.add(f"[dim][... {hidden} spans nested deeper not shown][/]")
                shown.update(id(s) for s in _reached_spans(below, children))
                continue
            stack.extend((branch, child, depth + 1) for child in reversed(below))
    return tree


def _reached_spans(
    tops: Sequence[SpanRecord], children: dict[str, list[SpanRecord]]
) -> list[SpanRecord]:
    """``tops`` and every span below them (each once, whatever loops)."""
    seen: dict[int, SpanRecord] = {}
    todo = list(tops)
    while todo:
        span = todo.pop()
        if id(span) not in seen:
            seen[id(span)] = span
            todo.extend(children.get(span.span_id, ()))
    return list(seen.values())


def _reached(tops: Sequence[SpanRecord], children: dict[str, list[SpanRecord]]) -> set[int]:
    return {id(s) for s in _reached_spans(tops, children)}


def _summary(traces: dict[str, list[SpanRecord]], grades: dict[str, str]) -> Table:
    table = Table(title=f"{len(traces)} runs (pick with --run TRACE_ID or --run SUITE/TASK)")
    table.add_column("trace id", no_wrap=True, min_width=32)
    for col in ("suite", "task", "mode", "provider", "epoch", "finish", "pass"):
        table.add_column(col, no_wrap=True)
    for col in ("spans", "tokens", "duration"):
        table.add_column(col, no_wrap=True, justify="right")
    for tid, spans in traces.items():
        roots = _roots(spans)
        root = roots[0] if roots else spans[0]
        a = root.attributes
        inp, out, _ = _totals(spans)
        status = grades.get(tid, "")
        style = {"passed": "green", "failed": "red", "error": "yellow"}.get(status, "dim")
        table.add_row(
            _t(tid),
            *(_t(str(a.get(f"harness.{k}", ""))) for k in ("suite", "task")),
            _t(str(a.get("harness.mode", a.get(c.GEN_AI_AGENT_NAME, "")))),
            _t(str(a.get("harness.provider", a.get(c.GEN_AI_PROVIDER_NAME, "")))),
            _t(str(a.get("harness.epoch", ""))),
            _t(str(a.get(c.HARNESS_RUN_FINISH_REASON, ""))),
            f"[{style}]{status or '?'}[/]",
            str(len(spans)),
            f"{inp}→{out}",
            _fmt_ms(root.duration_ms),
        )
    return table


#: DuckDB fetches no extension for a file it meets (the store's rule, ``NO_DOWNLOADS``).
_NO_DOWNLOADS: dict[str, str | bool | int | float | list[str]] = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
}


def grades_by_trace(db: str | Path | None, trace_ids: Sequence[str]) -> dict[str, str]:
    """``results.status`` (passed, failed, error) by trace id, from the results database when
    it exists and can be read; {} otherwise (the pass column then shows ``?``). The file's own
    ``results`` view is read as it is: ``harness traces show`` reads through the store instead
    (a view edited by hand showed every trace passed; adversary round 21, part B)."""
    if db is None or not Path(db).is_file() or not trace_ids:
        return {}
    try:
        import duckdb

        con = duckdb.connect(str(db), read_only=True, config=_NO_DOWNLOADS)
    except Exception:  # locked by a writer, or not a DuckDB file: the column stays unknown
        return {}
    try:
        rows = con.execute(
            "SELECT trace_id, arg_max(status, finished_at) FROM results "
            "WHERE list_contains(?, trace_id) GROUP BY trace_id",
            [list(trace_ids)],
        ).fetchall()
    except Exception:
        return {}
    finally:
        con.close()
    return {str(t): str(s) for t, s in rows}


def show_traces(
    path: str | Path,
    run: str | None = None,
    console: Console | None = None,
    *,
    db: str | Path | None = None,
    grades: Callable[[list[str]], dict[str, str]] | None = None,
) -> int:
    """Print the span tree(s) of ``path``; returns a process exit code (2: bad input, a file
    that holds no spans or no such run; never the gate's 1). ``db`` is the results database
    the pass column is read from (:func:`grades_by_trace`), or ``grades`` gives each trace's
    grade (the CLI reads them through the store, which refuses a view edited by hand)."""
    if console is None:
        # No emoji codes: a model's tool name "a:fire:" was shown "a🔥" (adversary round 14, A).
        console = Console(emoji=False)
        if not console.is_terminal:  # piped or captured: never cut the table at 80 columns
            console = Console(width=400, emoji=False)
    try:
        traces = group_traces(read_spans(path))
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        console.print(f"[red]cannot read {_t(str(path))}: {_t(reason)}[/]")
        return 2
    if not traces:
        console.print(f"[yellow]no spans in {_t(str(path))}[/] (is it a harness trace file?)")
        return 2
    if run is not None:
        traces = select_traces(traces, run)
        if not traces:
            console.print(
                f"[red]no run {_t(run)!s} in {_t(str(path))}[/] "
                "(give a trace id, a session id, or a task: TASK or SUITE/TASK)"
            )
            return 2
    if len(traces) > MAX_TREES:
        found = grades(list(traces)) if grades is not None else grades_by_trace(db, list(traces))
        console.print(_summary(traces, found))
        return 0
    for tid, spans in traces.items():
        console.print(render_trace(tid, spans))
    return 0
