"""One-way layers: harness's packages import each other in one direction only.

The layers, bottom to top (issue 16, "one-way layers"):

0. ``errors``, ``_version``, ``_exports``, ``_plugins`` (the registries), ``_yaml``,
   ``_toml`` (TOML read with one kind of error), ``_files`` (opening files for writing) and
   ``_oneline`` (messages on one bounded line), ``_urls`` (addresses without their secrets):
   leaves (``_plugins`` imports only ``errors``,
   ``_files`` and ``_oneline``, which import nothing of harness).
1. ``core`` (messages, terminations, budget and call records, Result, the halt signal) and
   ``harness.events``, the home of the event classes, which are built from core's messages and
   call records: events imports core, core never imports events.
2. ``providers``, ``tools`` and ``telemetry``: siblings that import only the layers below.
3. ``kernel``: the loop, and the Mode protocol it drives.
4. ``modes``: the builtin strategies.
5. The facade: ``harness.api`` (which resolves mode, provider and tools) and ``harness/__init__``.
6. ``store``, ``cassettes`` (recorded traffic) and ``grading`` (how a cell is judged);
7. ``suites`` (what to run: suite models, task sources, the audit);
8. ``bench`` (the runner and its executors), ``report`` and ``view``; 9. ``cli``.

The graph is read from every module's source, without importing it: module-level and
function-level imports count (they run at some point); imports under ``if TYPE_CHECKING:`` do not
count for the layers, nor for cycles between packages. Inside one package they do: two modules
that need each other, even only for a type hint, are one job split in two (or a job in the wrong
module), so no circle at all is allowed there. Importing ``harness.a.b`` also runs
``harness/__init__``; those implicit parent-package edges are not counted, as in import-linter.
"""

from __future__ import annotations

import ast
import functools
import itertools
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from tests.graphs import first_cycle

ROOT = Path(__file__).resolve().parents[1] / "harness"

#: Layer of each top-level package or module of harness ("harness" is the root ``__init__``).
LAYER = {
    "errors": 0,
    "_version": 0,
    "_exports": 0,
    "_plugins": 0,
    "_yaml": 0,
    "_files": 0,
    "_toml": 0,
    "_sync": 0,
    "_oneline": 0,
    "_urls": 0,
    "core": 1,
    "events": 1,
    "providers": 2,
    "tools": 2,
    "telemetry": 2,
    "kernel": 3,
    "modes": 4,
    "api": 5,
    "harness": 5,
    "store": 6,
    "cassettes": 6,
    "grading": 6,
    "suites": 7,
    "bench": 8,
    "report": 8,
    "view": 8,
    "cli": 9,
}

#: Imports between different packages of the same layer are refused unless listed here.
ALLOWED_WITHIN_LAYER = {
    ("events", "core"): "the event classes carry core's messages and call records (not reverse)",
    ("harness", "api"): "the root package re-exports the facade's run/arun",
    ("_plugins", "errors"): "a registry raises ConfigError for an unknown name",
    ("_plugins", "_files"): "an import that found no module names the FIFO in its way",
    ("_plugins", "_oneline"): "a plug-in's error is described on one bounded line",
    ("_yaml", "errors"): "the bounded YAML loader raises YAMLSyntaxError",
    ("_sync", "errors"): "the one sync bridge refuses a running loop with a HarnessError",
    ("view", "report"): "the viewer shows a run with the report's own tables and charts",
}

#: Downward imports that are refused all the same.
FORBIDDEN = {
    ("kernel", "telemetry"): "the kernel emits events; tracing subscribes to them (via the facade)",
    ("modes", "telemetry"): "modes emit events; tracing subscribes to them (via the facade)",
}

#: Upward imports that are accepted, each with its reason. Keep this empty if you can.
UPWARD_EXCEPTIONS: dict[tuple[str, str], str] = {}

Edge = tuple[str, str, str]  # (importing module, imported module, "path:line")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(test: ast.expr) -> bool:
    return "TYPE_CHECKING" in ast.unparse(test)


def _runtime_imports(
    node: ast.AST, type_checking: bool = False
) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement that can run, at any depth, skipping ``if TYPE_CHECKING:`` bodies
    (their ``else`` branch runs, so it counts); with ``type_checking``, those bodies too."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child
        elif isinstance(child, ast.If) and _is_type_checking(child.test) and not type_checking:
            for stmt in child.orelse:
                yield from _runtime_imports(ast.Module(body=[stmt], type_ignores=[]))
        else:
            yield from _runtime_imports(child, type_checking)


def _exists(module: str) -> bool:
    base = ROOT.parent.joinpath(*module.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (a.name for a in node.names)
        return
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - node.level + 1]
        target = ".".join([*base, node.module] if node.module else base)
    else:
        target = node.module or ""
    for alias in node.names:  # `from harness import events` imports the module harness.events
        sub = f"{target}.{alias.name}"
        yield sub if _exists(sub) else target


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


@functools.cache
def _parsed() -> tuple[tuple[Path, ast.Module], ...]:
    """Every module of harness, parsed (once per session)."""
    paths = sorted(ROOT.rglob("*.py"))
    return tuple((p, ast.parse(p.read_text(encoding="utf-8"), filename=str(p))) for p in paths)


@functools.cache
def import_edges(type_checking: bool = False) -> tuple[Edge, ...]:
    """Every runtime import from one harness module of another (parsed once per session); with
    ``type_checking``, the imports under ``if TYPE_CHECKING:`` too."""
    edges: list[Edge] = []
    for path, tree in _parsed():
        module = _module_name(path)
        for node in _runtime_imports(tree, type_checking):
            for target in _targets(module, path.name == "__init__.py", node):
                if target == "harness" or target.startswith("harness."):
                    where = f"{path.relative_to(ROOT.parent)}:{node.lineno}"
                    edges.append((module, target, where))
    return tuple(edges)


def package_graph(edges: tuple[Edge, ...]) -> dict[tuple[str, str], list[str]]:
    """Package-level edges (between different packages), each with the imports behind it."""
    graph: dict[tuple[str, str], list[str]] = defaultdict(list)
    for src, dst, where in edges:
        a, b = _package(src), _package(dst)
        if a != b:
            graph[(a, b)].append(f"{where} imports {dst}")
    return graph


def test_the_graph_sees_function_level_imports_and_skips_type_checking_ones() -> None:
    edges = {(src, dst) for src, dst, _ in import_edges()}
    # A function-level import (the suite model checks extra_modes with the mode registry) ...
    assert ("harness.suites._suite", "harness.modes._base") in edges
    # ... and none under `if TYPE_CHECKING:` (RunConfig is only a type hint in kernel._state),
    # unless asked for.
    assert ("harness.kernel._state", "harness.kernel._options") not in edges
    typed = {(src, dst) for src, dst, _ in import_edges(type_checking=True)}
    assert ("harness.kernel._state", "harness.kernel._options") in typed
    assert ("harness", "harness.events") in edges  # `from harness import events`


def test_events_sit_on_core_and_core_never_imports_events() -> None:
    graph = package_graph(import_edges())
    assert ("events", "core") in graph  # the events carry core's messages and call records
    assert ("core", "events") not in graph  # the other way would be a cycle (refused sideways)
    assert LAYER["events"] == LAYER["core"]


def test_every_package_has_a_layer() -> None:
    packages = {_package(_module_name(p)) for p in ROOT.rglob("*.py")}
    assert packages - set(LAYER) == set(), "place the new package in LAYER (tests/test_layers.py)"


def test_no_import_cycle_between_packages() -> None:
    graph = package_graph(import_edges())
    succ: dict[str, list[str]] = defaultdict(list)
    for a, b in graph:
        succ[a].append(b)
    cycle = first_cycle(succ)
    if cycle is not None:
        steps = [f"{a} -> {b}: {graph[(a, b)][0]}" for a, b in itertools.pairwise(cycle)]
        raise AssertionError("import cycle between packages:\n" + "\n".join(steps))


def test_imports_go_down_the_layers() -> None:
    wrong: list[str] = []
    for (a, b), why in sorted(package_graph(import_edges()).items()):
        if (a, b) in UPWARD_EXCEPTIONS:
            continue
        if LAYER[b] > LAYER[a]:
            wrong += [f"upward {a} -> {b}: {w}" for w in why]
        elif LAYER[b] == LAYER[a] and (a, b) not in ALLOWED_WITHIN_LAYER:
            wrong += [f"sideways {a} -> {b}: {w}" for w in why]
        elif (a, b) in FORBIDDEN:
            wrong += [f"forbidden {a} -> {b} ({FORBIDDEN[(a, b)]}): {w}" for w in why]
    assert wrong == [], "\n".join(wrong)


def test_the_listed_exceptions_are_still_needed() -> None:
    graph = package_graph(import_edges())
    stale = [edge for edge in (*UPWARD_EXCEPTIONS, *ALLOWED_WITHIN_LAYER) if edge not in graph]
    assert stale == [], f"no longer imported, remove from the lists: {stale}"


def test_no_module_imports_itself_back() -> None:
    """No import cycle between modules, at any depth (function-level imports count, as they run
    some time; `if TYPE_CHECKING:` ones do not). Package ``__init__`` edges are left out: a
    package's lazy table imports its modules on first use, never at import."""
    graph: dict[str, set[str]] = defaultdict(set)
    for src, dst, _ in import_edges():
        if src != dst and not _is_init(src):
            graph[src].add(dst)
    cycles = [c for c in _strongly_connected(graph) if len(c) > 1]
    assert cycles == [], "import cycles:\n" + "\n".join(" <-> ".join(sorted(c)) for c in cycles)


def test_no_module_is_over_450_lines() -> None:
    long = {
        str(p.relative_to(ROOT.parent)): n
        for p in ROOT.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 450
    }
    assert long == {}, "split these by job: " + ", ".join(f"{k} ({v})" for k, v in long.items())


def _is_init(module: str) -> bool:
    base = ROOT.parent.joinpath(*module.split("."))
    return (base / "__init__.py").is_file()


def _strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's algorithm, iteratively (the graph has hundreds of modules)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    counter = itertools.count()
    for root in list(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = next(counter)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = next(counter)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.add(top)
                    if top == node:
                        break
                found.append(component)
    return found
