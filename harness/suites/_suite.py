"""Suite files: the YAML format of docs/suites.md, validated with pydantic.

A suite is a mapping with ``suite`` (a name, ``^[a-z0-9][a-z0-9_-]*$``), ``description``,
``defaults`` (run options applied to every task that does not set them) and a non-empty list of
``tasks``. Each task has an ``id`` (unique in its suite), a ``prompt``, a grader under ``expect``
(see :class:`Grader`), and optionally ``workspace: {files: {path: text}}``, a ``mock`` script
(``{turns: [...], when_exhausted: error | repeat_last}``, the mock provider's format), ``tags`` and
any of the run-option overrides in :data:`RUN_OPTION_KEYS`. Unknown keys are errors everywhere.

The grader fields (and how each kind judges a run) are documented in
:mod:`harness.grading._graders`; :class:`Grader` is re-exported here. A task's ``run_options()`` are
the keyword options for :func:`harness.arun`, and ``mock_provider_opts()`` its mock script.

Every error names the file, the line, the task id and the field, and says what to do; all errors
of a file (up to 20) come in one :class:`SuiteError`, one per line.
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from harness.errors import ConfigError, SuiteError
from harness.grading._graders import GRADER_KINDS, Grader, field_error, relative_path_ok
from harness.kernel._options import parse_options
from harness.kernel._permissions import Phase
from harness.providers._mock import MockProvider
from harness.suites._errors import describe
from harness.suites._tools import ToolCatalog
from harness.suites._yaml_nodes import YAMLSyntaxError, duplicate_keys, line_of, parse_yaml
from harness.tools._registry import BUILTIN_TOOLS

__all__ = [
    "GRADER_KINDS",
    "RUN_OPTION_KEYS",
    "Grader",
    "MockScript",
    "RunOverrides",
    "Suite",
    "SuiteError",
    "Task",
    "Workspace",
    "collect_suites",
    "load_suite",
    "load_suites",
    "suite_files",
]

MAX_ERRORS = SuiteError.max_shown
_STRICT = ConfigDict(extra="forbid", strict=True)


class Workspace(BaseModel):
    """Files copied into the run's fresh workspace before it starts."""

    model_config = _STRICT

    files: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _paths(self) -> Workspace:
        for rel in self.files:
            if not relative_path_ok(rel):
                raise field_error(
                    ("files", rel), f"{rel!r} must be a relative path inside the workspace"
                )
        return self


class MockScript(BaseModel):
    """The scripted replies used when the provider is ``mock`` (see harness.providers._mock)."""

    model_config = _STRICT

    turns: list[dict[str, Any]] = Field(min_length=1)
    when_exhausted: Literal["error", "repeat_last"] = "error"
    #: Per-mode scripts (``{orchestrate: [turns...]}``), used instead of ``turns`` for that mode.
    modes: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    #: Seconds per call (or ``[lo, hi]``), plus up to ``latency_jitter_s`` more; see
    #: harness.providers._mock. For benchmarking latency-bound runs offline.
    latency_s: float | list[float] | None = None
    latency_jitter_s: float | None = None

    @model_validator(mode="after")
    def _turns(self) -> MockScript:
        try:
            MockProvider(latency_s=self.latency_s, latency_jitter_s=self.latency_jitter_s)
        except ConfigError as exc:
            name = "latency_jitter_s" if "latency_jitter_s" in str(exc) else "latency_s"
            raise field_error(name, str(exc).split(": ", 1)[1]) from None
        scripts = [("turns", self.turns)]
        scripts += [(f"modes.{mode}", turns) for mode, turns in self.modes.items()]
        for where, turns in scripts:
            if not turns:
                raise field_error(where, "needs at least one turn")
            for i, turn in enumerate(turns):
                try:
                    MockProvider([turn])
                except ConfigError as exc:
                    message = str(exc).removeprefix("mock turn 1: ")
                    raise field_error(f"{where}.{i}", message) from None
        return self


class RunOverrides(BaseModel):
    """Run options a suite's ``defaults`` or a task may set (keyword options of harness.arun)."""

    model_config = _STRICT

    tools: list[str] | None = None
    max_iterations: int | None = Field(default=None, ge=1)
    max_consecutive_mistakes: int | None = Field(default=None, ge=1)
    max_unproductive_iterations: int | None = Field(default=None, ge=0)
    progress_check: Literal["mode", "strict", "lax"] | None = None
    max_budget_usd: float | None = Field(default=None, gt=0)
    system_prompt: str | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, gt=0)
    tool_timeout_s: float | None = Field(default=None, gt=0)
    phase: str | None = None
    allowed_tools: list[str] | None = None
    disallowed_tools: list[str] | None = None
    until_tool: list[str] | None = None
    until_tool_success: bool | None = None
    max_reflections: int | None = Field(default=None, ge=0)
    interrupt_before: list[str] | None = None  # pauses answered by the task's ``approvals``

    @field_validator("tools", "until_tool", "interrupt_before", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _option_values(self, info: ValidationInfo) -> RunOverrides:
        for name in self.model_fields_set & _NOT_NULL:
            if getattr(self, name) is None:
                raise field_error(name, "must not be null; remove the key to keep the default")
        context = info.context if isinstance(info.context, dict) else {}
        catalog = context.get("tools") or ToolCatalog(Path.cwd())
        for i, name in enumerate(self.tools or ()):
            try:
                catalog.resolve(name)
            except ConfigError as exc:
                close = difflib.get_close_matches(name, list(BUILTIN_TOOLS), n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise field_error(f"tools.{i}", f"{exc}{hint}") from None
        if self.phase is not None and self.phase not in Phase.__members__.values():
            known = ", ".join(p.value for p in Phase)
            raise field_error("phase", f"unknown phase {self.phase!r}; use one of: {known}")
        return self

    def run_options(self) -> dict[str, Any]:
        """The options set here (explicit ``tools: null`` included: it means no tools)."""
        return {k: getattr(self, k) for k in RUN_OPTION_KEYS if k in self.model_fields_set}


RUN_OPTION_KEYS: tuple[str, ...] = tuple(RunOverrides.model_fields)
# Options whose run default is not None: an explicit null would be refused by harness.arun.
_NOT_NULL = frozenset(
    {
        "max_iterations",
        "max_consecutive_mistakes",
        "max_unproductive_iterations",
        "progress_check",
        "phase",
        "tool_timeout_s",
        "until_tool_success",
        "max_reflections",
    }
)


class AuditPolicy(BaseModel):
    """``audit: {allow: true, reason: "..."}``: the task may pass a model that does nothing
    (say why, e.g. a task about refusing), so ``harness suites audit`` does not fail on it."""

    model_config = _STRICT

    allow: bool
    reason: str = Field(min_length=3)


class Task(RunOverrides):
    """One task; after loading, the suite's defaults are merged in (the task's own values win)."""

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    prompt: str = Field(min_length=1)
    expect: Grader
    workspace: Workspace | None = None
    mock: MockScript | None = None
    tags: list[str] = Field(default_factory=list)
    #: Grade text answers of runs that did not end in success too (default: they fail).
    grade_on_error: bool = False
    #: ``harness suites audit``: excuse this task when a do-nothing model passes it.
    audit: AuditPolicy | None = None
    _catalog: ToolCatalog | None = PrivateAttr(default=None)
    #: Reviewer decisions for ``interrupt_before`` pauses, in order, one per pending call.
    approvals: list[Literal["approve", "deny"] | dict[Literal["edit"], dict[str, Any]]] = []

    def run_options(self) -> dict[str, Any]:
        """Keyword options for :func:`harness.arun` (not prompt, provider, mode or cwd; the
        runner gives each run a fresh ``cwd``, seeded from ``workspace_files``)."""
        options = super().run_options()
        if self._catalog is not None and options.get("tools"):
            options["tools"] = self._catalog.objects(options["tools"])
        if self.workspace is not None and self.workspace.files:
            options["workspace_files"] = dict(self.workspace.files)
        return options

    def mock_provider_opts(self, mode: str | None = None) -> dict[str, Any] | None:
        """``provider_opts`` for the mock provider (a fresh copy per call), or None: the
        script for ``mode`` when the task has one (``mock.modes``), else ``mock.turns``."""
        if self.mock is None:
            return None
        turns = self.mock.modes.get(mode, self.mock.turns) if mode else self.mock.turns
        opts: dict[str, Any] = {
            "turns": copy.deepcopy(turns),
            "when_exhausted": self.mock.when_exhausted,
        }
        if self.mock.latency_s is not None:
            opts["latency_s"] = copy.copy(self.mock.latency_s)
            opts["latency_jitter_s"] = self.mock.latency_jitter_s
        return opts


class Suite(BaseModel):
    """A validated suite file."""

    model_config = _STRICT

    suite: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")
    description: str = ""
    #: A Python file beside the suite whose ``@harness.tool`` tools ``tools:`` may name.
    tools_module: str | None = Field(default=None, pattern=r"\.py$")
    defaults: RunOverrides = Field(default_factory=RunOverrides)
    #: Modes this suite always runs as well as the run's ``--modes`` (e.g. ``orchestrate`` on the
    #: delegation suite), so a mode made for one kind of task is compared where it belongs.
    extra_modes: list[str] = Field(default_factory=list)
    tasks: list[Task] = Field(min_length=1)
    _source: Path | None = PrivateAttr(default=None)

    @property
    def name(self) -> str:
        return self.suite

    @property
    def source(self) -> Path | None:
        """The file the suite was loaded from."""
        return self._source

    def task(self, task_id: str) -> Task:
        for t in self.tasks:
            if t.id == task_id:
                return t
        raise KeyError(task_id)

    @model_validator(mode="after")
    def _merge_defaults(self) -> Suite:
        from harness.modes import BUILTIN_MODES

        for i, mode in enumerate(self.extra_modes):
            if mode not in BUILTIN_MODES:
                raise field_error(
                    f"extra_modes.{i}",
                    f"unknown mode {mode!r}; builtins: {', '.join(BUILTIN_MODES)}",
                )
        first: dict[str, int] = {}
        for i, t in enumerate(self.tasks):
            if t.id in first:
                raise field_error(
                    f"tasks.{i}.id",
                    f"duplicate task id {t.id!r} (task {first[t.id] + 1} has it too); "
                    "ids must be unique in a suite",
                )
            first[t.id] = i
        fields = self.defaults.model_fields_set
        merged = []
        for i, t in enumerate(self.tasks):
            update = {k: getattr(self.defaults, k) for k in fields if k not in t.model_fields_set}
            task = t.model_copy(update=update)
            tools = task.tools if "tools" in task.model_fields_set else ["all"]
            for name in task.until_tool or ():
                if not {"all", name} & set(tools or ()):
                    raise field_error(
                        f"tasks.{i}.until_tool",
                        f"{name!r} is not among the task's tools; add it to tools",
                    )
            try:
                parse_options(task.run_options())
            except ConfigError as exc:
                raise field_error(f"tasks.{i}", str(exc)) from None
            merged.append(task)
        self.tasks = merged
        return self


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
            found = sorted(f for f in p.iterdir() if f.suffix in (".yaml", ".yml") and f.is_file())
            if not found:
                issues.append(f"{p}: no *.yaml or *.yml suite files in this directory")
        elif p.is_file():
            found = [p]
        else:
            found = []
            issues.append(f"{p}: no such file or directory; give a suite file or a folder of them")
        for f in found:
            files.setdefault(f.resolve(), f)
    return list(files.values()), issues


def load_suite(path: str | Path) -> Suite:
    """Load and validate one suite file, raising :class:`SuiteError` with every problem found."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteError([f"{path}: cannot read the file: {exc}"]) from None
    try:
        data, node = parse_yaml(text)
    except YAMLSyntaxError as exc:
        where = f"{path}:{exc.line}:{exc.column}" if exc.line is not None else str(path)
        raise SuiteError([f"{where}: invalid YAML: {exc.problem}; fix the syntax there"]) from None
    if not isinstance(data, dict):
        raise SuiteError(
            [f"{path}: a suite file must be a mapping with `suite:` and `tasks:` at the top level"]
        )
    found = [
        (line, f"{path}:{line}: duplicate key {key!r} (first on line {first}); keep only one")
        for line, key, first in duplicate_keys(node)
    ]
    folder = path.resolve().parent
    module = data.get("tools_module")
    try:
        catalog = ToolCatalog(folder, module if isinstance(module, str) else None)
    except ConfigError as exc:
        line = line_of(node, ("tools_module",)) or 0
        found.append((line, f"{path}:{line}: tools_module: {exc}"))
        catalog = ToolCatalog(folder)
    try:
        suite = Suite.model_validate(data, context={"tools": catalog})
    except ValidationError as exc:
        found += [describe(path, node, data, err, _MODELS) for err in exc.errors()]
    if found:  # in file order
        raise SuiteError([text for _, text in sorted(found, key=lambda item: item[0])])
    suite._source = path
    for task in suite.tasks:  # python graders and custom tools import from the suite's folder
        task.expect.with_base_dir(folder)
        task._catalog = catalog
    return suite


def collect_suites(paths: Iterable[str | Path]) -> tuple[list[Suite], list[str]]:
    """Load every suite under ``paths``; returns the valid suites and the problems found (suite
    names must be unique across files)."""
    suites: list[Suite] = []
    files, issues = _expand(paths)
    seen: dict[str, Path | None] = {}
    for file in files:
        try:
            suite = load_suite(file)
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
