"""Suite files: the YAML format of docs/suites.md, validated with pydantic.

A suite is a mapping with ``suite`` (a name, ``^[a-z0-9][a-z0-9_-]*$``), ``description``,
``defaults`` (run options applied to every task that does not set them) and a non-empty list of
``tasks``. Each task has an ``id`` (unique in its suite), a ``prompt``, a grader under ``expect``
(see :class:`Grader`), and optionally ``workspace: {files: {path: text}}``, a ``mock`` script
(``{turns: [...], when_exhausted: error | repeat_last}``, the mock provider's format), ``tags`` and
any of the run-option overrides in :data:`RUN_OPTION_KEYS`. Unknown keys are errors everywhere.

The grader fields (and how each kind judges a run) are documented in :mod:`harness.grading`
(one class per kind); :class:`Grader` is re-exported here. A task's ``run_options()`` are the
keyword options for :func:`harness.arun`, and ``mock_provider_opts()`` its mock script.

Every error names the file, the line, the task id and the field, and says what to do; all errors
of a file (up to 20) come in one :class:`SuiteError`, one per line.
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from harness._plugins import described, shown_value
from harness.errors import ConfigError, SuiteError
from harness.grading._base import Grader, GraderField
from harness.grading._fields import field_error, relative_path_ok
from harness.kernel._options import ProgressCheck, RunConfig, parse_options
from harness.kernel._permissions import Phase
from harness.providers._mock import MockProvider
from harness.suites._tools import ToolCatalog, added_tool_clash
from harness.suites._workspace_files import MAX_NAME, file_name_problem, workspace_clash
from harness.tools._registry import BUILTIN_TOOLS

__all__ = [
    "RUN_OPTION_KEYS",
    "Grader",
    "MockScript",
    "RunOverrides",
    "Suite",
    "SuiteError",
    "Task",
    "UserTurn",
    "Workspace",
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
            if problem := file_name_problem(rel):  # passed validate, then an error cell
                raise field_error(("files", rel), f"{rel!r} {problem}")
        if clash := workspace_clash(self.files):  # `a` and `a/b`: an error cell before
            raise field_error(("files", clash[0]), clash[1])
        return self


class MockScript(BaseModel):
    """The scripted replies used when the provider is ``mock`` (see harness.providers._mock)."""

    model_config = _STRICT

    turns: list[dict[str, Any]] = Field(min_length=1)
    when_exhausted: Literal["error", "repeat_last"] = "error"
    #: Per-mode scripts (``{orchestrate: [turns...]}``), used instead of ``turns`` for that mode.
    modes: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    #: Seconds per call (or ``[lo, hi]``), plus up to ``latency_jitter_s`` more (the mock
    #: provider's options). For benchmarking latency-bound runs offline.
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


def _option(name: str) -> Any:
    """A suite field for the run option ``name``: None unless given, with the option's bounds
    (``ge``, ``gt``, ``le``, ``lt``) taken from its one declaration, so the two never differ."""
    bounds = {
        key: getattr(m, key)
        for m in RunConfig.model_fields[name].metadata
        for key in ("ge", "gt", "le", "lt")
        if getattr(m, key, None) is not None
    }
    return Field(default=None, **bounds)


class RunOverrides(BaseModel):
    """Run options a suite's ``defaults`` or a task may set (keyword options of harness.arun).

    Each is unset (None) unless given, typed as YAML gives it, and bounded as the option is in
    its group (:mod:`harness.kernel._options`, where each option is declared once)."""

    model_config = _STRICT

    tools: list[str] | None = None
    max_iterations: int | None = _option("max_iterations")
    max_consecutive_mistakes: int | None = _option("max_consecutive_mistakes")
    max_unproductive_iterations: int | None = _option("max_unproductive_iterations")
    progress_check: ProgressCheck | None = None
    max_budget_usd: float | None = _option("max_budget_usd")
    system_prompt: str | None = None
    temperature: float | None = _option("temperature")
    max_tokens: int | None = _option("max_tokens")
    tool_timeout_s: float | None = _option("tool_timeout_s")
    phase: str | None = None
    allowed_tools: list[str] | None = None
    disallowed_tools: list[str] | None = None
    until_tool: list[str] | None = None
    until_tool_success: bool | None = None
    max_reflections: int | None = _option("max_reflections")
    interrupt_before: list[str] | None = None  # pauses answered by the task's ``approvals``
    #: Few-shot conversations sent before each tool-offering call (the profile Example form:
    #: ``{messages: [...], tools: [...]}``), rendered through the provider's tool protocol.
    examples: list[dict[str, Any]] | None = None

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
        # A task made by a source with its own tool factory was checked by that source (pydantic
        # runs "after" validators again when the task joins a suite file's Suite).
        made = getattr(self, "__pydantic_private__", None) or {}
        names = () if made.get("_tool_factory") is not None else (self.tools or ())
        for i, name in enumerate(names):
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
    #: Only these adversaries are excused (default: every one), e.g. ``[read-echo]`` for a task
    #: whose named file holds the answer.
    adversaries: list[str] | None = None

    def excuses(self, adversary: str) -> bool:
        """Does this policy excuse a pass by ``adversary`` (``one-empty-call:TOOL`` included)?"""
        return self.adversaries is None or adversary.split(":", 1)[0] in self.adversaries


class UserTurn(BaseModel):
    """A follow-up user message of a conversation (``turns:``), optionally adding tools."""

    model_config = _STRICT

    user: str = Field(min_length=1)
    add_tools: list[str] = Field(default_factory=list)


class Task(RunOverrides):
    """One task; after loading, the suite's defaults are merged in (the task's own values win)."""

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*(?:/[A-Za-z0-9][A-Za-z0-9._-]*)*$",
                    max_length=MAX_NAME)  # fmt: skip
    #: The first user message (or ``turns[0]`` when the task is a conversation).
    prompt: str = Field(default="", min_length=0)
    #: A conversation: the user's messages in order (the first is the prompt); each is answered
    #: by the mode until a text reply, with the same tools and workspace; a turn may add tools.
    turns: list[str | UserTurn] | None = None
    #: Tool-calling steps allowed per user turn (the run ends error_max_steps_per_turn past it).
    max_steps_per_turn: int | None = _option("max_steps_per_turn")
    expect: GraderField
    workspace: Workspace | None = None
    mock: MockScript | None = None
    tags: list[str] = Field(default_factory=list)
    #: Grade text answers of runs that did not end in success too (default: they fail).
    grade_on_error: bool = False
    #: ``harness suites audit``: excuse this task when a do-nothing model passes it.
    audit: AuditPolicy | None = None
    _catalog: ToolCatalog | None = PrivateAttr(default=None)
    _tool_factory: Callable[[], dict[str, Any]] | None = PrivateAttr(default=None)
    #: Reviewer decisions for ``interrupt_before`` pauses, in order, one per pending call.
    approvals: list[Literal["approve", "deny"] | dict[Literal["edit"], dict[str, Any]]] = []

    @model_validator(mode="after")
    def _prompt_or_turns(self, info: ValidationInfo) -> Task:
        if self.turns is not None:
            if not self.turns:
                raise field_error("turns", "give at least one user message")
            first = self.turns[0]
            text = first if isinstance(first, str) else first.user
            if not isinstance(first, str) and first.add_tools:
                raise field_error("turns.0.add_tools", "the first turn's tools are `tools:`")
            self._check_added_tools(info)
            if "prompt" in self.model_fields_set and self.prompt != text:
                raise field_error("prompt", "give the prompt or turns, not both")
            self.prompt = text
        elif not self.prompt:
            raise field_error("prompt", "missing required field; add `prompt:` here")
        if self.max_steps_per_turn is not None and self.turns is None:
            raise field_error("max_steps_per_turn", "only for conversations (`turns:`)")
        return self

    def _check_added_tools(self, info: ValidationInfo) -> None:
        """Every ``add_tools`` name of a follow-up turn names a tool, as ``tools:`` does (an
        unknown one made error cells in ``run`` and crashed ``suites audit``)."""
        context = info.context if isinstance(info.context, dict) else {}
        catalog = context.get("tools") or ToolCatalog(Path.cwd())
        made = getattr(self, "__pydantic_private__", None) or {}
        if made.get("_tool_factory") is not None:
            return  # a source with its own tool factory checked its names
        for i, turn in enumerate(self.turns or ()):
            for j, name in enumerate(() if isinstance(turn, str) else turn.add_tools):
                where = f"turns.{i}.add_tools.{j}"
                if name == "all":
                    raise field_error(where, "'all' is not a tool a turn can add; name the tools")
                try:
                    catalog.resolve(name)
                except ConfigError as exc:
                    close = difflib.get_close_matches(name, list(BUILTIN_TOOLS), n=1)
                    hint = f" (did you mean {close[0]!r}?)" if close else ""
                    raise field_error(where, f"{exc}{hint}") from None

    def with_tools(self, factory: Callable[[], dict[str, Any]]) -> None:
        """Make this task's tools per run with ``factory`` (fresh objects, by name, for every
        cell: e.g. tools bound to per-run state). ``tools:`` and ``add_tools`` name them."""
        self._tool_factory = factory

    def _made_tools(self) -> Mapping[str, Any] | None:
        """The tool factory's tools by name (None: no factory); its failure a ConfigError (a
        traceback of ``harness run`` before; adversary round 16, part A)."""
        if self._tool_factory is None:
            return None
        try:
            made = self._tool_factory()
            if isinstance(made, Mapping):  # a plain copy: its own get raised (round 17, A)
                return dict(Mapping.items(made))
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # a plug-in's own, SystemExit too: said, not raised
            raise ConfigError(f"the task's tool factory raised {described(exc)}") from None
        raise ConfigError(f"the task's tool factory returned {shown_value(made, 80)}")

    def run_options(self) -> dict[str, Any]:
        """Keyword options for :func:`harness.arun` (not prompt, provider, mode or cwd; the
        runner gives each run a fresh ``cwd``, seeded from ``workspace_files``)."""
        options = super().run_options()
        made = self._made_tools()

        def objects(names: list[str]) -> list[Any]:
            if made is not None:
                return [made.get(n, n) for n in names]
            if self._catalog is not None:
                return list(self._catalog.objects(names) or [])
            return list(names)

        if options.get("tools"):
            options["tools"] = objects(options["tools"])
        if self.turns is not None:
            options["turns"] = [
                t if isinstance(t, str) else {"user": t.user, "add_tools": objects(t.add_tools)}
                for t in self.turns[1:]
            ]
            if self.max_steps_per_turn is not None:
                options["max_steps_per_turn"] = self.max_steps_per_turn
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

    suite: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$", max_length=MAX_NAME)
    description: str = ""
    #: A Python file beside the suite whose ``@harness.tool`` tools ``tools:`` may name.
    tools_module: str | None = Field(default=None, pattern=r"\.py$")
    defaults: RunOverrides = Field(default_factory=RunOverrides)
    #: Modes this suite always runs as well as the run's ``--modes`` (e.g. ``orchestrate`` on the
    #: delegation suite), so a mode made for one kind of task is compared where it belongs.
    extra_modes: list[str] = Field(default_factory=list)
    #: The only modes of the run's ``--modes`` this suite runs (None: all of them), e.g.
    #: ``[react]`` where the other modes mean nothing (a suite without tools).
    only_modes: list[str] | None = Field(default=None, min_length=1)
    tasks: list[Task] = Field(min_length=1)
    _source: Path | None = PrivateAttr(default=None)

    @property
    def name(self) -> str:
        return self.suite

    @property
    def source(self) -> Path | None:
        """The file the suite was loaded from."""
        return self._source

    def modes_for(self, modes: list[str] | tuple[str, ...]) -> list[str]:
        """The modes this suite runs in a run of ``modes``: those of ``modes`` it allows
        (``only_modes``), then its ``extra_modes``."""
        allowed = [m for m in modes if self.only_modes is None or m in self.only_modes]
        return [*allowed, *(m for m in self.extra_modes if m not in allowed)]

    def task(self, task_id: str) -> Task:
        for t in self.tasks:
            if t.id == task_id:
                return t
        raise KeyError(task_id)

    @model_validator(mode="after")
    def _merge_defaults(self, info: ValidationInfo) -> Suite:
        from harness.modes._base import check_mode_spec

        context = info.context if isinstance(info.context, dict) else {}
        catalog = context.get("tools") or ToolCatalog(Path.cwd())
        for i, mode in enumerate(self.extra_modes):
            try:
                self.extra_modes[i] = check_mode_spec(mode)
            except ConfigError as exc:
                raise field_error(f"extra_modes.{i}", str(exc)) from None
        if self.only_modes is not None:
            labels = []
            for i, mode in enumerate(self.only_modes):
                try:
                    labels.append(check_mode_spec(mode))
                except ConfigError as exc:
                    raise field_error(f"only_modes.{i}", str(exc)) from None
            self.only_modes = labels
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
            offered = set(tools or ())  # once: per name, 40,000 of each took 40 s (round 22 B)
            for name in task.until_tool or ():
                if not {"all", name} & offered:
                    why = f"{name!r} is not among the task's tools; add it to tools"
                    raise field_error(f"tasks.{i}.until_tool", why)
            clash = added_tool_clash(task, list(tools or ()), catalog) if task.turns else None
            if clash is not None:
                raise field_error(f"tasks.{i}.{clash[0]}", clash[1])
            try:
                parse_options(task.run_options())
            except ConfigError as exc:
                raise field_error(f"tasks.{i}", str(exc)) from None
            merged.append(task)
        self.tasks = merged
        return self
