"""The grader seam: :class:`Grader` (one pydantic model per kind), the :data:`GRADERS` registry
of kinds, :data:`GraderField` (the ``expect:`` of a task: a union discriminated by ``kind`` that
plug-ins extend) and :func:`grade`, which judges a run.

A grader kind is a subclass of :class:`Grader` with ``kind: Literal["NAME"]``, its own fields,
and :meth:`Grader.evaluate`, a coroutine (``async def``; a plain ``def`` is accepted too, and
:func:`agrade` runs it on a worker thread when the class says it is ``slow``). It declares, as
class variables, what the runner needs to know about it: whether it reads the workspace after
the run, runs a process, may take seconds, makes model calls that the cell's cassette records,
and whether it reads the run's answer (text graders fail a run that has none). Register it
under its kind (entry point group ``harness.graders``, or
:meth:`GRADERS.register <harness._plugins.Registry.register>`), or name it in a suite as
``kind: package.module:Class``.
"""

from __future__ import annotations

import asyncio
import inspect
import math
from collections.abc import Awaitable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar

from pydantic import (
    BaseModel,
    ConfigDict,
    PrivateAttr,
    ValidationError,
    ValidatorFunctionWrapHandler,
)
from pydantic import WrapValidator as _Wrap
from pydantic_core import PydanticCustomError

from harness._plugins import Registry, described, is_reference
from harness._sync import in_thread, run_sync
from harness.core._result import Result
from harness.errors import ConfigError
from harness.grading._fields import field_error
from harness.grading._grade import Grade
from harness.grading._pool import GraderPool

__all__ = [
    "DEFAULT_TIME_LIMIT_S",
    "GRADERS",
    "GradeContext",
    "Grader",
    "GraderField",
    "agrade",
    "grade",
    "parse_grader",
    "walked",
]


#: The wall-clock bound of one verdict of a kind that sets none (:attr:`Grader.time_limit_s`).
DEFAULT_TIME_LIMIT_S = 1800.0


@dataclass(frozen=True, slots=True)
class GradeContext:
    """What a grader may read besides the Result."""

    #: The run's workspace folder after the run (None when the runner made none).
    workspace: Path | None = None
    #: Grade the answer of runs that did not end in success too.
    grade_on_error: bool = False
    #: The httpx transport that carries a judge's calls (the cell's cassette).
    cassette: Any = None
    #: The worker processes of python graders (the runner's own; None: the default pool).
    pool: GraderPool | None = None


class Grader(BaseModel):
    """How a task's run is judged (the ``expect:`` of a suite task). Subclass per kind."""

    model_config = ConfigDict(extra="forbid", strict=True)

    kind: str

    #: Reads the run's workspace folder after the run (the runner keeps one for the cell).
    reads_workspace: ClassVar[bool] = False
    #: Runs a child process (the runner stops such graders on Ctrl-C).
    needs_process: ClassVar[bool] = False
    #: A synchronous ``evaluate`` that may take seconds: run on a worker thread, off the event
    #: loop (an ``async def evaluate`` never needs it: it awaits its slow parts).
    slow: ClassVar[bool] = False
    #: Makes model calls, recorded in (and replayed from) the cell's cassette.
    records_calls: ClassVar[bool] = False
    #: Reads the run's answer: fails a run that did not stop or submit, unless grade_on_error.
    reads_answer: ClassVar[bool] = False
    #: What each required field holds, for "needs `field`" messages.
    field_help: ClassVar[dict[str, str]] = {}
    #: Seconds of wall clock one verdict may take; past them the grading is cancelled and the
    #: cell is an error (a grader that never returns must not hold a run for ever). Generous by
    #: default: an LLM judge on a slow local model writes about one token a second. ``None``:
    #: no bound here, for kinds that bound their own work (python, command, judge, bfcl, ...).
    time_limit_s: ClassVar[float | None] = DEFAULT_TIME_LIMIT_S

    _base_dir: Path | None = PrivateAttr(default=None)

    @property
    def base_dir(self) -> Path | None:
        """The folder python graders are imported from first (the suite file's folder)."""
        return self._base_dir

    def with_base_dir(self, folder: Path | None) -> None:
        """Import python graders (this one and any it combines) from ``folder`` first."""
        self._base_dir = folder
        for part in self._parts():
            part.with_base_dir(folder)

    def parts(self) -> list[Grader]:
        """The graders this one combines (``all`` / ``any``); none for a plain kind."""
        return []

    def _parts(self) -> list[Grader]:
        """:meth:`parts`, a plug-in's, checked: one raising, or answering what is not graders,
        ended ``suites validate`` and ``harness run`` in a traceback (adversary round 20, A)."""
        try:
            parts = list(self.parts())
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # a plug-in's own, GeneratorExit too: said, not raised
            why = f"raised {described(exc)}"
        else:
            bad = [type(p).__name__ for p in parts if not isinstance(p, Grader)]
            if not bad:
                return parts
            why = f"holds a {bad[0]}, not a Grader"
        raise ConfigError(f"grader {self.kind!r}: its parts() {why}")

    def walk(self) -> Iterator[Grader]:
        """This grader and every grader it combines, depth first."""
        yield self
        for part in self._parts():
            yield from part.walk()

    def needs(self, flag: str) -> bool:
        """Does this grader, or one it combines, declare ``flag`` (e.g. ``"reads_workspace"``)?"""
        return any(getattr(type(g), flag) for g in walked(self))

    def evaluate(self, result: Result, context: GradeContext) -> Grade | Awaitable[Grade]:
        """Judge ``result``; may raise (:func:`agrade` turns an exception into an error grade).
        Subclasses override it as ``async def`` (the usual way) or as a plain ``def``."""
        raise NotImplementedError(f"{type(self).__name__}.evaluate")


def walked(grader: Grader) -> list[Grader]:
    """``grader.walk()`` as a list; a plug-in's ``walk`` raising is a :class:`ConfigError` (a
    traceback of ``harness run`` before: adversary round 20, part A)."""
    try:
        found = list(grader.walk())
    except ConfigError:
        raise
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # a plug-in's own, GeneratorExit too: said, not raised
        raise ConfigError(f"grader {grader.kind!r}: its walk() raised {described(exc)}") from None
    return found


def _grader_class(obj: Any, spec: str) -> type[Grader]:
    if not (isinstance(obj, type) and issubclass(obj, Grader)):
        raise ConfigError(f"grader kind {spec!r}: {obj!r} is not a harness.grading.Grader subclass")
    bad = _bad_limit(obj.time_limit_s)
    if bad:
        raise ConfigError(f"grader kind {spec!r}: {bad}")
    return obj


def _bad_limit(limit: object) -> str:
    """Why ``limit`` is no ``time_limit_s`` ("" when it is one)."""
    if limit is None or (
        isinstance(limit, int | float) and not isinstance(limit, bool) and 0 < limit < math.inf
    ):
        return ""
    return f"time_limit_s must be a number of seconds above 0, or None for no bound; got {limit!r}"


#: Grader kinds by name: the built-ins, kinds registered in code and the entry points of the
#: group ``harness.graders``; ``kind: package.module:Class`` works in a suite too.
GRADERS: Registry[type[Grader]] = Registry(
    "grader kind",
    "harness.graders",
    {
        "equals": "harness.grading._text:EqualsGrader",
        "contains": "harness.grading._text:ContainsGrader",
        "regex": "harness.grading._text:RegexGrader",
        "number": "harness.grading._text:NumberGrader",
        "json_schema": "harness.grading._structured:JsonSchemaGrader",
        "file_contains": "harness.grading._text:FileContainsGrader",
        "finish_reason": "harness.grading._structured:FinishReasonGrader",
        "tool_calls": "harness.grading._structured:ToolCallsGrader",
        "python": "harness.grading._python:PythonGrader",
        "command": "harness.grading._command:CommandGrader",
        "judge": "harness.grading._judge:JudgeGrader",
        "all": "harness.grading._combine:AllGrader",
        "any": "harness.grading._combine:AnyGrader",
    },
    check=_grader_class,
)


def _pick(value: Any, handler: ValidatorFunctionWrapHandler) -> Grader:
    """Validate ``value`` as the grader class its ``kind`` names."""
    if isinstance(value, Grader):
        return value
    if not isinstance(value, dict):
        raise field_error((), f"a grader is a mapping with `kind:`, got {type(value).__name__}")
    kind = value.get("kind")
    if not isinstance(kind, str):
        raise field_error("kind", f"give the grader kind, one of: {', '.join(GRADERS.names())}")
    try:
        cls = GRADERS.get(kind)
    except ConfigError as exc:
        raise field_error("kind", str(exc)) from None
    # The messages of the fields kind by kind: required ones, and keys the kind does not use.
    fields = {(f.alias or n): f for n, f in cls.model_fields.items()}
    for name in sorted(set(value) - set(fields)):
        raise field_error(name, _unused(name, kind, sorted(fields)))
    for name, info in fields.items():
        if info.is_required() and name not in value:
            what = cls.field_help.get(name) or info.description or "required"
            raise field_error(name, f"{kind} needs `{name}`: {what}")
    data = dict(value)
    try:
        if is_reference(kind):  # the class's own Literal kind, whatever the suite called it
            data["kind"] = cls.model_fields["kind"].default or kind
        return cls.model_validate(data)
    except (ValidationError, PydanticCustomError, KeyboardInterrupt):
        raise
    except BaseException as exc:  # a plug-in grader's own validator failed: one line
        raise field_error("kind", f"grader {kind!r} raised {described(exc)}") from None


def _unused(name: str, kind: str, allowed: list[str]) -> str:
    """The message for a key that grader ``kind`` does not take."""
    import difflib

    for other in GRADERS.names():
        try:
            cls = GRADERS.get(other)
        except ConfigError:
            continue
        if name in {(f.alias or n) for n, f in cls.model_fields.items()}:
            return f"`{name}` is not used by {kind} graders; remove it"
    close = difflib.get_close_matches(name, allowed, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return f"unknown key {name!r}; {hint}allowed here: {', '.join(allowed)}"


#: The ``expect:`` of a task: validated as the class its ``kind`` names (see :data:`GRADERS`).
GraderField = Annotated[Grader, _Wrap(_pick)]


def parse_grader(data: dict[str, Any]) -> Grader:
    """A grader from its mapping (``{"kind": "contains", "value": "395"}``)."""
    from pydantic import TypeAdapter

    return TypeAdapter(GraderField).validate_python(data)


async def agrade(
    grader: Grader,
    result: Result,
    workspace: Path | None = None,
    *,
    grade_on_error: bool = False,
    cassette: Any = None,
    pool: GraderPool | None = None,
) -> Grade:
    """Judge ``result`` (and, for graders that read it, the run's ``workspace`` after the run).
    Never raises. ``cassette``: the httpx transport that carries a judge's calls; ``pool``:
    where python graders run (default: the process's default pool).

    Text graders read the run's answer: the deliverable of a submitted run, or the final
    assistant reply of a run that stopped. A run that ended any other way has no answer (a plan
    or a critique is never one), so text graders fail it, unless ``grade_on_error`` is set."""
    context = GradeContext(workspace, grade_on_error, cassette, pool)
    return await evaluate(grader, result, context)


def grade(
    grader: Grader,
    result: Result,
    workspace: Path | None = None,
    *,
    grade_on_error: bool = False,
    cassette: Any = None,
    pool: GraderPool | None = None,
) -> Grade:
    """Synchronous :func:`agrade` (outside an event loop; inside one, await :func:`agrade`)."""
    job = agrade(
        grader, result, workspace, grade_on_error=grade_on_error, cassette=cassette, pool=pool
    )
    return run_sync(job, called="grade()", instead="await harness.grading.agrade(...)")


async def _verdict(grader: Grader, result: Result, context: GradeContext) -> Grade:
    """The grader's own verdict: the one place a synchronous ``evaluate`` is bridged (called
    on the loop, or on a thread of its own when the class is ``slow``: one that never returns
    is left behind, see :func:`~harness._sync.in_thread`)."""
    method = grader.evaluate
    answer: Any
    if not inspect.iscoroutinefunction(method) and type(grader).slow:
        answer = await in_thread(method, result, context)
    else:
        answer = method(result, context)
    if inspect.isawaitable(answer):  # an async def (or a def that returns an awaitable)
        answer = await answer
    if not isinstance(answer, Grade):
        raise TypeError(f"evaluate returned {type(answer).__name__}, not a Grade")
    return answer if type(answer) is Grade else _plain_grade(answer)


def _plain_grade(grade: Grade) -> Grade:
    """A ``Grade`` subclass's verdict as a plain ``Grade``, its fields read from their slots and
    checked again: a subclass whose ``__getattribute__`` lied after ``__post_init__`` had
    checked it stored a score of 7.0 and passed a ``Grade(False, 0.0, ...)`` (adversary round
    14, part A)."""
    names = ("passed", "score", "explanation", "error", "cost_usd")
    return Grade(*(getattr(Grade, name).__get__(grade, Grade) for name in names))


async def evaluate(grader: Grader, result: Result, context: GradeContext) -> Grade:
    """:func:`agrade` with a :class:`GradeContext` (what combined graders await for their
    parts)."""
    if type(grader).reads_answer and not result.success and not context.grade_on_error:
        reason = result.finish_reason.value
        return Grade.of(
            False,
            f"no answer: the run ended with {reason} ({result.category.value}); text graders "
            "grade only runs that stop or submit (set grade_on_error: true to grade anyway)",
        )
    limit = type(grader).time_limit_s
    bad = _bad_limit(limit)  # checked when the kind was looked up, but a class can change after
    if bad:
        return Grade(False, 0.0, f"{grader.kind} grader error: {bad}", error=True)
    answer = await _bounded(grader, result, context, limit)
    if isinstance(answer, KeyboardInterrupt):
        raise answer  # the cell stops the run as on Ctrl-C
    if isinstance(answer, BaseException):  # a broken grader is an error cell, never a crash
        why = f"{type(answer).__name__}: {answer}"
        return Grade(False, 0.0, f"{grader.kind} grader error: {why}", error=True)
    if answer is None:
        return Grade(
            False,
            0.0,
            f"{grader.kind} grader error: no verdict within its time limit of {limit:g} s "
            f"(stopped); a grader kind sets its own as the class variable time_limit_s",
            error=True,
        )
    verdict = answer
    reason = result.finish_reason.value
    if verdict.passed or verdict.error or result.success or reason in verdict.explanation:
        return verdict
    # Say how a failed run ended (e.g. it ran out of turns before answering).
    why = f"{verdict.explanation} (run ended with {reason})"
    return Grade(False, verdict.score, why, cost_usd=verdict.cost_usd)


async def _bounded(
    grader: Grader, result: Result, context: GradeContext, limit: float | None
) -> Grade | BaseException | None:
    """The grader's verdict or what it raised; ``None`` past ``limit``. The grading runs as a
    task of its own that is cancelled at the limit and never waited for after it: a grader that
    swallows its cancellation (or answers after it) cannot hold the cell."""

    async def caught() -> Grade | BaseException:
        try:
            return await _verdict(grader, result, context)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # SystemExit, GeneratorExit, a BaseException of its own
            if isinstance(exc, GeneratorExit) and _closing():
                raise  # this coroutine is being closed (a task left behind, collected)
            return exc

    job = asyncio.ensure_future(caught())
    try:
        done, _ = await asyncio.wait({job}, timeout=limit)
    except asyncio.CancelledError:  # the cell is stopped: so is its grading
        job.cancel()
        raise
    if not done:
        job.cancel()
        job.add_done_callback(_forget)
        return None
    if job.cancelled():  # its own CancelledError: a crash like any other
        return asyncio.CancelledError("the grader raised CancelledError")
    return job.result()


def _closing() -> bool:
    """Is the running coroutine being closed from outside an event loop (not run by one)?"""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return True
    return False


def _forget(job: asyncio.Future[Any]) -> None:
    if not job.cancelled():
        job.exception()  # retrieved: no "exception was never retrieved" at exit
