"""Loading suites: files, folders and task sources (``bfcl:simple_python``) -> validated
:class:`~harness.suites._suite.Suite` objects.

Every error names the file, the line, the task id and the field, and says what to do; all errors
of a file (up to 20) come in one :class:`SuiteError`, one per line.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from harness._files import MAX_INPUT_BYTES, not_a_folder, read_regular
from harness.errors import ConfigError, SuiteError
from harness.grading._base import Grader
from harness.suites._errors import describe
from harness.suites._sources import load_source, source_spec
from harness.suites._suite import MockScript, RunOverrides, Suite, Task, Workspace
from harness.suites._tools import ToolCatalog
from harness.suites._yaml_nodes import YAMLSyntaxError, line_of, parse_document

__all__ = ["collect_suites", "load_suite", "load_suites", "suite_files"]


def suite_files(paths: Iterable[str | Path]) -> list[Path]:
    """Files named by ``paths``: a directory means every ``*.yaml`` / ``*.yml`` in it, sorted."""
    files, issues = _expand(paths)
    if issues:
        raise SuiteError(issues)
    return files


def _expand(paths: Iterable[str | Path]) -> tuple[list[Path], list[str]]:
    files: dict[Path, Path] = {}  # resolved -> as given, so a file named twice loads once
    issues = []
    for p in map(Path, paths):
        if p.is_dir():
            named = sorted(f for f in p.iterdir() if f.suffix in (".yaml", ".yml"))
            found = [f for f in named if f.is_file()]
            # A FIFO, a link to nothing or one that loops was passed over without a word: the
            # run went on without that suite, and the gate saw its baseline cells as "not
            # requested", not missing. A folder named x.yaml is no suite file: passed over.
            odd = [f for f in named if not f.is_file() and not f.is_dir()]
            issues += [f"{f}: {_not_a_suite(f)}" for f in odd]
            if not found and not odd:
                issues.append(f"{p}: no *.yaml or *.yml suite files in this directory")
        elif p.is_file():
            found = [p]
        else:
            found = []
            issues.append(f"{p}: {_not_a_suite(p)}")
        for f in found:
            files.setdefault(f.resolve(), f)
    return list(files.values()), issues


def _not_a_suite(path: Path) -> str:
    """Why ``path`` (neither a file nor a folder) is no suite: it is missing, or what it is."""
    if not os.path.lexists(path):
        return "no such file or directory; give a suite file or a folder of them"
    return f"is {not_a_folder(path)}, not a suite file; remove it or fix the link"


def load_suite(path: str | Path) -> Suite:
    """Load and validate one suite file, raising :class:`SuiteError` with every problem found."""
    path = Path(path)
    try:
        # a FIFO is refused, never waited on; so is a file larger than any suite
        text = read_regular(path, limit=MAX_INPUT_BYTES).decode("utf-8")
    except OSError as exc:
        raise SuiteError([f"{path}: cannot read the file: {exc.strerror or exc}"]) from None
    except UnicodeDecodeError as exc:
        raise SuiteError([f"{path}: cannot read the file: {exc}"]) from None
    try:
        data, node, repeats = parse_document(text)
    except YAMLSyntaxError as exc:
        where = f"{path}:{exc.line}:{exc.column}" if exc.line is not None else str(path)
        raise SuiteError([f"{where}: invalid YAML: {exc.problem}; fix the syntax there"]) from None
    if not isinstance(data, dict):
        raise SuiteError(
            [f"{path}: a suite file must be a mapping with `suite:` and `tasks:` at the top level"]
        )
    found = [
        (line, f"{path}:{line}: duplicate key {key!r} (first on line {first}); keep only one")
        for line, key, first in repeats
    ]
    sourced: list[Task] = []
    if "source" in data:
        sourced = _sourced_tasks(path, node, data)
    folder = path.resolve().parent
    module = data.get("tools_module")
    try:
        catalog = ToolCatalog(folder, module if isinstance(module, str) else None)
    except ConfigError as exc:
        line = line_of(node, ("tools_module",)) or 0
        found.append((line, f"{path}:{line}: tools_module: {exc}"))
        catalog = ToolCatalog(folder)
    try:
        if sourced:
            data = {**data, "tasks": [*sourced, *(data.get("tasks") or [])]}
        suite = Suite.model_validate(data, context={"tools": catalog})
    except ValidationError as exc:
        found += [describe(path, node, data, err, _MODELS) for err in exc.errors()]
    if found:  # in file order
        raise SuiteError([text for _, text in sorted(found, key=lambda item: item[0])])
    suite._source = path
    for task in suite.tasks:  # python graders and custom tools import from the suite's folder
        if task._tool_factory is None and task._catalog is None:
            try:
                task.expect.with_base_dir(folder)
            except ConfigError as exc:  # a plug-in grader's parts() (adversary round 20, A)
                raise SuiteError([f"{path}: task {task.id!r}: {exc}"]) from None
            task._catalog = catalog
    return suite


def _sourced_tasks(path: Path, node: Any, data: dict[str, Any]) -> list[Task]:
    """The tasks of a YAML suite's ``source: {kind: NAME, ...}`` (removed from ``data``)."""
    spec = data.pop("source")
    line = line_of(node, ("source",)) or 0
    if not isinstance(spec, dict) or not isinstance(spec.get("kind"), str):
        raise SuiteError([f"{path}:{line}: source: give a mapping with `kind:` (e.g. bfcl)"])
    options = {k: v for k, v in spec.items() if k != "kind"}
    made = load_source(spec["kind"], None, options, where=f"{path}:{line}: source")
    data.setdefault("description", made.description)
    return list(made.tasks)


def _load_source_path(text: str, spec: tuple[str, str | None]) -> Suite:
    suite = load_source(spec[0], spec[1], {}, where=text)
    suite._source = Path(text)
    return suite


def _exists(path: str) -> bool:
    try:
        return Path(path).exists()
    except OSError:  # e.g. a source spec longer than a file name may be
        return False


def collect_suites(paths: Iterable[str | Path]) -> tuple[list[Suite], list[str]]:
    """Load every suite under ``paths``; returns the valid suites and the problems found (suite
    names must be unique across files)."""
    suites: list[Suite] = []
    given = [str(p) for p in paths]
    specs = {p: source_spec(p) for p in given if not _exists(p)}
    files, issues = _expand([p for p in given if specs.get(p) is None])
    seen: dict[str, Path | None] = {}
    made: list[tuple[Path, Suite | None]] = [(f, None) for f in files]
    for text, spec in specs.items():
        if spec is None:
            continue
        try:
            made.append((Path(text), _load_source_path(text, spec)))
        except SuiteError as exc:
            issues.extend(exc.issues)
    for file, ready in made:
        try:
            suite = ready if ready is not None else load_suite(file)
        except SuiteError as exc:
            issues.extend(exc.issues)
            continue
        if suite.name in seen:
            issues.append(
                f"{file}: suite name {suite.name!r} is also used by {seen[suite.name]}; "
                "suite names must be unique"
            )
            continue
        seen[suite.name] = file
        suites.append(suite)
    return suites, issues


def load_suites(paths: Iterable[str | Path]) -> list[Suite]:
    """Load the suites under ``paths`` (files or folders); raises SuiteError with all problems."""
    suites, issues = collect_suites(paths)
    if issues:
        raise SuiteError(issues)
    return suites


# --- error messages -----------------------------------------------------------------------------

#: The model behind each key, for "unknown key" hints; ``"tasks[]"`` is a task entry.
_MODELS: dict[str, type[BaseModel]] = {
    "": Suite,
    "tasks[]": Task,
    "defaults": RunOverrides,
    "expect": Grader,
    "workspace": Workspace,
    "mock": MockScript,
}
