"""Executors: what runs a matrix of cells, by name (the :data:`EXECUTORS` registry).

``local`` runs cells in this process (:class:`~harness.bench._runner.Runner`); ``ray`` on Ray
actors (:mod:`harness.bench._ray_executor`). A plug-in executor is a factory registered under the
entry point group ``harness.executors`` (or given as ``package.module:factory``), called as
``factory(options, sink, context)`` and returning an :class:`~harness.bench._runner.Executor`:
an object with ``request_stop()`` and ``async run(cells, on_outcome) -> MatrixSummary`` that
hands every finished cell to ``sink`` once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness._plugins import Registry, described
from harness.bench._runner import Executor, Runner, RunnerOptions, Sink
from harness.errors import ConfigError, HarnessError
from harness.suites._suite import Suite

__all__ = ["EXECUTORS", "ExecutorContext", "ExecutorFactory", "local_executor", "make_executor"]


@dataclass(frozen=True, slots=True)
class ExecutorContext:
    """What an executor may need besides the runner options: the run's suites (a remote worker
    loads them again), its span file and collector, and the executor's own flags."""

    suites: Sequence[Suite]
    trace_file: Path | None = None
    otlp_endpoint: str | None = None
    workers: int | None = None
    address: str | None = None
    #: The run's secret values: an executor whose workers write spans or export them scrubs
    #: these (:class:`harness.cassettes._secrets.Redactor`), as the local runner's sinks do.
    secrets: tuple[str, ...] = ()


ExecutorFactory = Callable[[RunnerOptions, Sink, ExecutorContext], Executor]


def local_executor(options: RunnerOptions, sink: Sink, context: ExecutorContext) -> Executor:
    """Cells in this process, ``options.concurrency`` at a time."""
    refuse_ray_flags(context.workers, context.address)
    return Runner(options, sink)


def refuse_ray_flags(workers: int | None, address: str | None) -> None:
    """The local executor takes neither ``--workers`` nor ``--ray-address`` (the one check, for
    the pre-flight and for the executor itself)."""
    for flag, value in (("--workers", workers), ("--ray-address", address)):
        if value is not None:
            raise ConfigError(f"{flag}: only with --executor ray")


def _factory(obj: Any, spec: str) -> ExecutorFactory:
    if not callable(obj):
        raise ConfigError(f"executor {spec!r}: {obj!r} is not a factory (options, sink, context)")
    return obj  # type: ignore[no-any-return]


#: Executors by name (see the module docstring).
EXECUTORS: Registry[ExecutorFactory] = Registry(
    "executor",
    "harness.executors",
    {
        "local": "harness.bench._executors:local_executor",
        "ray": "harness.bench._ray_executor:ray_executor",
    },
    check=_factory,
)


def make_executor(
    name: str, options: RunnerOptions, sink: Sink, context: ExecutorContext
) -> Executor:
    """The executor ``name`` (registered or ``module:factory``) for this run; a plug-in factory
    that raises is a :class:`ConfigError` (one line, exit 2), never a traceback."""
    factory = EXECUTORS.get(name)
    try:
        return factory(options, sink, context)
    except (HarnessError, KeyboardInterrupt):
        raise
    except BaseException as exc:  # SystemExit and a plug-in's own BaseException too
        raise ConfigError(
            f"--executor {name!r}: making the executor raised {described(exc)}"
        ) from None
