"""Reports that compare agent modes honestly, and the CI gate.

Work on a ``results`` DataFrame (docs/sql.md; :func:`load_run` reads one from the store):

- :func:`summary_table`, :func:`finish_reason_table`, :func:`pass_k_table`: per mode x provider;
- :func:`paired_comparisons`: every pair of modes on the same cells, McNemar exact test, Holm,
  task-bootstrap intervals and a plain-words verdict;
- :func:`baseline_diff`: per-cell flips and cost changes against another run or a baseline file;
- :func:`build_report`, :func:`render_markdown`, :func:`render_html`, :func:`write_report`;
- :func:`baseline_save`, :func:`load_baseline`, :func:`run_gate`: the committed baseline and the
  gate (exit code 0/1, offending cells, ``$GITHUB_STEP_SUMMARY``);
- the statistics on their own: :func:`mcnemar_exact`, :func:`holm_adjust`,
  :func:`cluster_bootstrap`,
  :func:`wilson_interval`, :func:`pass_at_k`, :func:`pass_hat_k`.

The package imports its modules eagerly, so pandas, scipy and statsmodels load with it (any of its
modules loads them anyway). The light entry points (``import harness``, ``harness --help``) do not
import this package: the CLI commands import it when they run.
"""

from __future__ import annotations

from harness.report._baseline import baseline_save, load_baseline
from harness.report._build import Report, build_report
from harness.report._cells import failing_cells_frame, task_grid_frame
from harness.report._compare import paired_comparisons
from harness.report._diff import baseline_diff, diff_counts
from harness.report._gate import run_gate, thresholds_from_pyproject, write_step_summary
from harness.report._gate_result import GateThresholds
from harness.report._headline import Verdict
from harness.report._loader import load_run
from harness.report._power import mdd_floor, minimum_detectable_difference, sign_test_power
from harness.report._render import render_html, render_markdown, write_report
from harness.report._requested import RequestedMatrix
from harness.report._stats import (
    cluster_bootstrap,
    holm_adjust,
    mcnemar_exact,
    pass_at_k,
    pass_hat_k,
    wilson_interval,
)
from harness.report._tables import (
    ReportInputError,
    finish_reason_table,
    pass_k_table,
    prepare_results,
    summary_table,
)

__all__ = [
    "GateThresholds",
    "Report",
    "ReportInputError",
    "RequestedMatrix",
    "Verdict",
    "baseline_diff",
    "baseline_save",
    "build_report",
    "cluster_bootstrap",
    "diff_counts",
    "failing_cells_frame",
    "finish_reason_table",
    "holm_adjust",
    "load_baseline",
    "load_run",
    "mcnemar_exact",
    "mdd_floor",
    "minimum_detectable_difference",
    "paired_comparisons",
    "pass_at_k",
    "pass_hat_k",
    "pass_k_table",
    "prepare_results",
    "render_html",
    "render_markdown",
    "run_gate",
    "sign_test_power",
    "summary_table",
    "task_grid_frame",
    "thresholds_from_pyproject",
    "wilson_interval",
    "write_report",
    "write_step_summary",
]
