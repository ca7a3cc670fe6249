"""harness.bench: the runner. The matrix of cells, the run session (``harness run``) and the
executors that run cells (local, ray).

What a run reads comes from the packages beside it: :mod:`harness.suites` (what to run),
:mod:`harness.grading` (how a cell is judged), :mod:`harness.cassettes` (recorded traffic).
Importing the package loads nothing but this table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness._exports import lazy_exports

if TYPE_CHECKING:
    from harness.bench._executors import EXECUTORS as EXECUTORS
    from harness.bench._executors import ExecutorContext as ExecutorContext
    from harness.bench._matrix import Cell as Cell
    from harness.bench._matrix import expand as expand
    from harness.bench._redact import run_redactor as run_redactor
    from harness.bench._runner import CellOutcome as CellOutcome
    from harness.bench._runner import MatrixSummary as MatrixSummary
    from harness.bench._runner import Runner as Runner
    from harness.bench._runner import RunnerOptions as RunnerOptions
    from harness.bench._session import BenchRequest as BenchRequest
    from harness.bench._session import run_bench as run_bench

#: Each private module and the public names it exports here (``__all__`` derives from it).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "harness.bench._executors": ("EXECUTORS", "ExecutorContext"),
    "harness.bench._matrix": ("Cell", "expand"),
    "harness.bench._redact": ("run_redactor",),
    "harness.bench._runner": ("CellOutcome", "MatrixSummary", "Runner", "RunnerOptions"),
    "harness.bench._session": ("BenchRequest", "run_bench"),
}
__all__, __getattr__ = lazy_exports(__name__, _EXPORTS)
