"""harness.bench: suites (YAML), graders, the matrix, the runner, cassettes and the suite audit.

:func:`load_suite` reads and checks a suite file (the fields: docs/suites.md); :func:`run_bench`
runs a matrix of cells (``harness run``). Importing the package loads nothing but this table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness._exports import lazy_exports

if TYPE_CHECKING:
    from harness.bench._audit import AuditFinding as AuditFinding
    from harness.bench._audit import AuditReport as AuditReport
    from harness.bench._audit import audit_suites as audit_suites
    from harness.bench._cassette_lint import lint_cassettes as lint_cassettes
    from harness.bench._cassettes import CassetteTransport as CassetteTransport
    from harness.bench._cassettes import cassette_path as cassette_path
    from harness.bench._graders import Grade as Grade
    from harness.bench._graders import grade as grade
    from harness.bench._matrix import Cell as Cell
    from harness.bench._matrix import expand as expand
    from harness.bench._runner import CellOutcome as CellOutcome
    from harness.bench._runner import MatrixSummary as MatrixSummary
    from harness.bench._runner import Runner as Runner
    from harness.bench._runner import RunnerOptions as RunnerOptions
    from harness.bench._session import BenchReport as BenchReport
    from harness.bench._session import BenchRequest as BenchRequest
    from harness.bench._session import run_bench as run_bench
    from harness.bench._suite import Grader as Grader
    from harness.bench._suite import Suite as Suite
    from harness.bench._suite import Task as Task
    from harness.bench._suite import collect_suites as collect_suites
    from harness.bench._suite import load_suite as load_suite
    from harness.bench._suite import load_suites as load_suites

#: Each private module and the public names it exports here (``__all__`` derives from it).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "harness.bench._audit": ("AuditFinding", "AuditReport", "audit_suites"),
    "harness.bench._cassette_lint": ("lint_cassettes",),
    "harness.bench._cassettes": ("CassetteTransport", "cassette_path"),
    "harness.bench._graders": ("Grade", "grade"),
    "harness.bench._matrix": ("Cell", "expand"),
    "harness.bench._runner": ("CellOutcome", "MatrixSummary", "Runner", "RunnerOptions"),
    "harness.bench._session": ("BenchReport", "BenchRequest", "run_bench"),
    "harness.bench._suite": (
        "Grader",
        "Suite",
        "Task",
        "collect_suites",
        "load_suite",
        "load_suites",
    ),
}
__all__, __getattr__ = lazy_exports(__name__, _EXPORTS)
