"""The harness error hierarchy: every exception the library raises on purpose, in one place.

Every class derives from :class:`HarnessError`, so ``except HarnessError`` catches anything the
harness raises deliberately. The classes are defined here (this module imports nothing else from
harness, so every layer can use it); import them from here::

    HarnessError
    ├── ConfigError (also a ValueError)   bad input found before a run starts
    │   ├── YAMLSyntaxError               malformed YAML (line, column, problem)
    │   ├── SuiteError                    invalid suite file(s) (issues, one line each)
    │   └── ReportInputError              unusable results or baseline for a report or the gate
    ├── ProviderError                     a provider call failed (kind, status, ...)
    ├── ContextOverflow                   the prompt no longer fits the context window
    ├── ThinkingStarved                   a turn spent its whole output cap without an answer
    ├── CompactionError                   a compaction stage failed
    ├── ToolError                         raised by a tool: an error result for the model
    │   └── SandboxUnavailable            the shell sandbox (bwrap) cannot run here
    ├── ToolSafetyNet                     a tool's safety net expired: the run ends as
    │   │                                 error_during_execution (no result for the model)
    │   └── CpuLimitReached               grep's search spent its CPU time (in its worker)
    ├── WorkerStopped                     BFCL's worker processes were stopped (Ctrl-C) while a
    │                                     call waited or ran
    ├── WorkerDied                        a BFCL worker process died while it ran a call (out of
    │                                     memory)
    ├── StoreError                        the results store cannot do what was asked
    │   ├── SchemaTooNew                  the file was written by a newer harness
    │   ├── StoreLocked                   another process holds the database (pid)
    │   │   └── LabelBusy                 another process is running this run label (pid)
    │   ├── DiskFull                      the disk stayed full past the retries (resumable)
    │   └── UnknownRun                    rows for a run that begin_run never made
    └── CassetteError                     a cassette problem (never retried)
        ├── CassetteMiss                  no recorded answer, and recording is forbidden
        └── CassetteCorrupt               the cassette file cannot be read

- :class:`ConfigError`: ``harness.run`` raises only these; every termination after the loop has
  started is reported in the :class:`~harness.Result` instead. Being a ``ValueError`` too, it is
  caught by ``except ValueError``.
- :class:`ProviderError`: ``kind`` says how the call failed (see :data:`ErrorKind`).
- :class:`ToolError`: raise it inside a tool to report a failure to the model as an error result.
- :class:`ToolSafetyNet`: raise it inside a tool when a wall-clock bound expired. Such a bound
  depends on the machine's load, so its expiry is never shown to the model (a replay under
  another load would differ): the run ends as ``error_during_execution``, an infrastructure
  error of the cell. Limits the model may see are work-based (bytes, names, directories).

Every error pickles (the state travels across processes, e.g. from a worker back to the runner):
:meth:`HarnessError.__reduce__` rebuilds the instance from its ``args`` and attributes without
calling ``__init__``, so subclasses with their own constructor need nothing extra.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Literal

__all__ = [
    "CassetteCorrupt",
    "CassetteError",
    "CassetteMiss",
    "CompactionError",
    "ConfigError",
    "ContextOverflow",
    "CpuLimitReached",
    "DiskFull",
    "ErrorKind",
    "HarnessError",
    "LabelBusy",
    "ProviderError",
    "ReportInputError",
    "SandboxUnavailable",
    "SchemaTooNew",
    "StoreError",
    "StoreLocked",
    "SuiteError",
    "ThinkingStarved",
    "ToolError",
    "ToolSafetyNet",
    "UnknownRun",
    "WorkerDied",
    "WorkerStopped",
    "YAMLSyntaxError",
]

ErrorKind = Literal[
    "unauthorized",
    "not_found",
    "rate_limited",
    "timeout",
    "context_length_exceeded",
    "bad_request",
    "server_error",
    "transport",
    "invalid_response",
    "unknown",
]


class HarnessError(Exception):
    """Base class of every error raised by harness."""

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuild from args and attributes without calling __init__: a subclass whose __init__
        # takes other arguments than ``args`` (ProviderError, SuiteError...) still unpickles.
        return (_rebuild, (type(self), self.args, dict(self.__dict__)))


def _rebuild(cls: type[HarnessError], args: tuple[Any, ...], state: dict[str, Any]) -> HarnessError:
    """Unpickle a :class:`HarnessError` as ``__reduce__`` described it, without ``__init__``."""
    exc = cls.__new__(cls, *args)
    exc.__dict__.update(state)
    return exc


class ConfigError(HarnessError, ValueError):
    """Bad configuration, detected before anything ran. The message names the option and the fix."""


class ProviderError(HarnessError):
    """A provider call failed.

    ``kind`` is one of :data:`ErrorKind`; ``status`` is the HTTP status when there was one.
    """

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        status: int | None = None,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message
        self.status = status
        self.retry_after_s = retry_after_s
        #: How many times the call was tried before this error was raised (retries included).
        self.attempts = 1

    @classmethod
    def from_status(cls, status: int, message: str) -> ProviderError:
        """Map an HTTP status (and, for 400s, a context-length message) to an error kind."""
        return cls(kind_from_status(status, message), message, status=status)

    def __str__(self) -> str:
        where = f" (HTTP {self.status})" if self.status is not None else ""
        return f"{self.kind}{where}: {self.message}"

    def __repr__(self) -> str:
        return (
            f"ProviderError(kind={self.kind!r}, status={self.status!r}, message={self.message!r})"
        )


_CONTEXT_MARKERS = (
    "context length",
    "context_length",
    "maximum context",
    "too many tokens",
    "prompt is too long",
    "context window",
    "exceeds the context",
)


def kind_from_status(status: int, message: str = "") -> ErrorKind:
    """HTTP status -> error kind, as docs/providers.md fixes it."""
    lowered = message.lower()
    if status in (401, 403):
        return "unauthorized"
    if status == 413 or (status in (400, 500) and any(m in lowered for m in _CONTEXT_MARKERS)):
        return "context_length_exceeded"
    if status == 404:
        return "not_found"
    if status == 408:
        return "timeout"
    if status == 429:
        return "rate_limited"
    if 400 <= status < 500:
        return "bad_request"
    if status >= 500:
        return "server_error"
    return "unknown"


class ToolError(HarnessError):
    """Raise inside a tool to return an error result (``is_error=True``) to the model."""


class SandboxUnavailable(ToolError):
    """The shell sandbox cannot run here (bwrap missing or unusable); the message says why."""


class ToolSafetyNet(HarnessError):
    """A tool's safety net expired (grep still searching after ``GREP_TIME_LIMIT_S`` seconds of
    CPU time, or its worker silent for ten minutes). Not a :class:`ToolError`: the kernel ends
    the run as ``error_during_execution`` instead of showing the model a result that depends
    on load."""


class CpuLimitReached(ToolSafetyNet):
    """Raised in grep's worker process when a search has spent ``GREP_TIME_LIMIT_S`` seconds of
    CPU time (a ``SIGPROF`` timer); the grep tool turns it into the :class:`ToolSafetyNet` that
    ends the run."""


class WorkerStopped(HarnessError):
    """BFCL's worker processes were killed (Ctrl-C) while a call waited for one or ran."""


class WorkerDied(HarnessError):
    """A BFCL worker process died while it ran a call (killed by the system, out of memory)."""


class ContextOverflow(HarnessError):
    """The prompt no longer fits the model's context window (the kernel compacts and retries)."""


class ThinkingStarved(HarnessError):
    """A model turn hit its completion cap with no text and no tool calls (the kernel raises the
    cap and retries once; ExAthena's ``:error_thinking_starved``). ``info`` holds
    ``completion_cap``, ``output_tokens`` and ``reasoning_tokens``."""

    def __init__(self, message: str, info: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.info: dict[str, Any] = dict(info or {})


class CompactionError(HarnessError):
    """A compaction stage failed."""


# --- configuration files -------------------------------------------------------------------------


class YAMLSyntaxError(ConfigError):
    """Malformed YAML; ``line`` and ``column`` are 1-based (None when the parser gave none).

    A :class:`ConfigError`, hence also a ``ValueError`` (what it was before it joined the tree).
    """

    def __init__(self, problem: str, line: int | None, column: int | None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.line = line
        self.column = column


class SuiteError(ConfigError):
    """Invalid suite file(s). ``issues`` holds one line per problem (file:line: where: what).

    The message shows the first :attr:`max_shown` issues and counts the rest.
    """

    max_shown: ClassVar[int] = 20

    def __init__(self, issues: Sequence[str]) -> None:
        self.issues = list(issues)
        shown = self.issues[: self.max_shown]
        if len(self.issues) > self.max_shown:
            shown.append(f"... and {len(self.issues) - self.max_shown} more errors")
        super().__init__("\n".join(shown))


class ReportInputError(ConfigError):
    """The results or baseline given to a report or the gate are unusable; the message says why."""


# --- the results store ---------------------------------------------------------------------------


class StoreError(HarnessError):
    """The results store cannot do what was asked (bad row, unknown run, unreadable file...)."""


class SchemaTooNew(StoreError):
    """The file was written by a newer harness than this one."""


class UnknownRun(StoreError):
    """Rows name a run the database has no ``bench_runs`` row for (``begin_run`` first)."""


class StoreLocked(StoreError):
    """Another process (or another writer in this one) has the database open.

    ``pid`` is the holder's process id when it could be found.
    """

    def __init__(self, message: str, *, pid: int | None = None) -> None:
        super().__init__(message)
        self.pid = pid


class LabelBusy(StoreLocked):
    """Another process is running this run label (a run, or a ``--resume`` of it): one writer
    per label. ``pid`` is the holder's process id when its lock file names it."""


class DiskFull(StoreError):
    """A write kept failing with ENOSPC or EDQUOT past the retries (``HARNESS_DISK_FULL_WAIT_S``).

    What was written stays; the run is resumable (``harness run --resume --label L``)."""


# --- cassettes -----------------------------------------------------------------------------------


class CassetteError(HarnessError):
    """A cassette problem (a base class; never retried by the HTTP layer)."""


class CassetteMiss(CassetteError):
    """A request has no recorded answer and the record mode forbids recording it."""


class CassetteCorrupt(CassetteError):
    """A cassette file exists but cannot be read as a cassette."""
