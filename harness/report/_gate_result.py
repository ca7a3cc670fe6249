"""A gate's result: the thresholds it applied (:class:`GateThresholds`), its checks
(:class:`GateCheck`), the verdict with the cells responsible (:class:`GateResult`), and how it is
shown: a terminal table, Markdown for a PR / step summary, and GitHub workflow annotations
(``::error::`` lines). :mod:`harness.report._gate` computes it."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from harness.report._format import (
    cell_name,
    fmt_pct,
    fmt_usd,
    isnan,
    md_table,
    md_text,
    text_table,
)
from harness.report._tables import ReportInputError
from harness.telemetry._escape import escape_controls

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "GateCheck",
    "GateResult",
    "GateThresholds",
    "check_message",
    "distinct_pair",
    "fmt_change_pct",
    "fmt_drop_pts",
    "gate_markdown",
    "gate_text",
    "github_annotations",
]


@dataclass(frozen=True, slots=True)
class GateThresholds:
    """How much worse a run may be than the baseline before the gate fails."""

    max_cost_increase: float = 0.10
    max_pass_rate_drop: float = 0.05
    allow_flips: int = 0
    #: Baseline cells the run may lack before the gate fails (completeness check).
    allow_missing: int = 0
    #: Live providers: a regression must also be significant on the paired tasks (sign test
    #: for pass rate and flips, Wilcoxon signed-rank for cost, p < 0.05) to fail the gate.
    significance: bool = False

    def __post_init__(self) -> None:
        if not (self.max_cost_increase >= 0 and math.isfinite(self.max_cost_increase)):
            raise ReportInputError(f"max_cost_increase must be >= 0, got {self.max_cost_increase}")
        if not 0 <= self.max_pass_rate_drop <= 1:
            raise ReportInputError(
                f"max_pass_rate_drop must be between 0 and 1, got {self.max_pass_rate_drop}"
            )
        if self.allow_flips < 0:
            raise ReportInputError(f"allow_flips must be >= 0, got {self.allow_flips}")
        if self.allow_missing < 0:
            raise ReportInputError(f"allow_missing must be >= 0, got {self.allow_missing}")

    def with_overrides(self, **overrides: float | int | bool | None) -> GateThresholds:
        """A copy with the non-None ``overrides`` applied."""
        changes: dict[str, Any] = {k: v for k, v in overrides.items() if v is not None}
        return replace(self, **changes)


@dataclass(frozen=True, slots=True)
class GateCheck:
    """One comparison: ``change`` is relative for cost, absolute (a drop) for pass rate, a count
    for flips; ``ok`` is False when it is past ``limit`` (a count's limit is an ``int``, shown
    exactly: through a float, 2**63 - 1 was printed as ...808)."""

    name: str
    scope: str
    baseline: float
    current: float
    change: float
    limit: float | int
    ok: bool
    detail: str


@dataclass
class GateResult:
    """The verdict, the checks, the cells responsible and the warnings."""

    checks: list[GateCheck]
    offending: pd.DataFrame
    warnings: list[str]
    thresholds: GateThresholds
    counts: dict[str, int] = field(default_factory=dict)
    baseline_source: str = "baseline"

    @property
    def passed(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def exit_code(self) -> int:
        """0 when the gate passes, 1 on a regression."""
        return 0 if self.passed else 1

    def failed_checks(self) -> list[GateCheck]:
        return [c for c in self.checks if not c.ok]

    def to_text(self, max_cells: int = 30) -> str:
        return gate_text(self, max_cells)

    def to_markdown(self, max_cells: int = 50) -> str:
        return gate_markdown(self, max_cells)

    def annotations(self) -> list[str]:
        return github_annotations(self)


_CHECK_HEADERS = ["", "check", "scope", "baseline", "now", "change", "limit"]
_CELL_HEADERS = ["reason", "cell", "baseline", "now", "cost baseline", "cost now", "cost change"]


def _sig(x: float, digits: int = 2) -> str:
    """``x`` with at least one decimal and ``digits`` significant digits: 0.00013 -> '0.00013'."""
    if x == 0 or not math.isfinite(x):
        return f"{x:.1f}"
    decimals = max(1, digits - 1 - math.floor(math.log10(abs(x))))
    return f"{x:.{digits - 1}e}" if decimals > _DECIMALS_MAX else f"{x:.{decimals}f}"


#: Past this many decimals a number is written in scientific notation (a baseline's cost of
#: 5e-324 printed 325 digits: adversary round 16, part B).
_DECIMALS_MAX = 10


def fmt_change_pct(change: float) -> str:
    """A relative change with enough digits to be seen: +0.1% -> '+0.1%', 1.3e-6 ->
    '+0.00013%', 0 -> '±0%'."""
    if isnan(change):
        return "–"
    if math.isinf(change):
        return "+inf" if change > 0 else "-inf"
    if change == 0:
        return "±0%"
    return ("+" if change > 0 else "-") + _sig(abs(change) * 100) + "%"


def fmt_drop_pts(drop: float) -> str:
    """A pass-rate change in points (``-drop``) with enough digits to be seen."""
    if isnan(drop):
        return "–"
    if drop == 0:
        return "±0 pts"
    return ("-" if drop > 0 else "+") + _sig(abs(drop) * 100) + " pts"


def distinct_pair(a: float, b: float, fmt: Callable[[float, int], str], start: int) -> list[str]:
    """``fmt(a, d)`` and ``fmt(b, d)`` with the fewest digits ``d >= start`` that tell two
    different values apart (never '$0.762 $0.762' for two different costs)."""
    for d in range(start, start + 12):
        sa, sb = fmt(a, d), fmt(b, d)
        if sa != sb or a == b or isnan(a) or isnan(b):
            return [sa, sb]
    return [sa, sb]


def _usd(x: float, sig: int) -> str:
    if isnan(x):
        return "–"
    if x == 0:
        return "$0"
    if not math.isfinite(x):  # a cost edited into the store by hand (round 20 B)
        return ("-" if x < 0 else "") + f"${abs(x)}"
    decimals = max(2, sig - 1 - math.floor(math.log10(abs(x))))
    if decimals > _DECIMALS_MAX:
        return ("-" if x < 0 else "") + f"${abs(x):.{sig - 1}e}"
    return ("-" if x < 0 else "") + f"${abs(x):,.{decimals}f}"


def _check_row(c: GateCheck) -> list[str]:
    mark = "ok" if c.ok else "FAIL"
    if c.name == "cost":
        values = distinct_pair(c.baseline, c.current, _usd, 3)
        values += [fmt_change_pct(c.change), f"+{c.limit:.0%}"]
    elif c.name == "pass_rate":
        values = distinct_pair(c.baseline, c.current, fmt_pct, 1)
        values += [fmt_drop_pts(c.change), f"-{c.limit * 100:g} pts"]
    else:
        values = ["–", f"{c.current:.0f}", f"{c.change:.0f}", _count(c.limit)]
    return [mark, c.name, c.scope, *values]


def check_message(c: GateCheck) -> str:
    """One sentence per failed check, for annotations and logs."""
    if c.name == "cost":
        rise = "from 0" if math.isinf(c.change) else f"by {fmt_change_pct(c.change).lstrip('+')}"
        base, now = distinct_pair(c.baseline, c.current, _usd, 3)
        return f"cost ({c.scope}) rose {rise}: {base} -> {now} (limit +{c.limit:.0%})"
    if c.name == "pass_rate":
        base, now = distinct_pair(c.baseline, c.current, fmt_pct, 1)
        return (
            f"pass rate ({c.scope}) dropped {fmt_drop_pts(c.change).lstrip('-')}: {base} -> "
            f"{now} (limit {c.limit * 100:g} pts)"
        )
    if c.name == "missing_cells":
        return (
            f"{c.change:.0f} of {c.baseline:.0f} baseline cell(s) are missing from the run "
            f"(allowed: {_count(c.limit)}; --allow-missing N)"
        )
    if c.name == "errored_cells":
        return f"{c.current:.0f} cell(s) errored and could not be scored (allowed: 0)"
    if c.name == "suites":
        return f"the run covers other suites than the baseline ({c.detail})"
    return (
        f"{c.current:.0f} cell(s) passed in the baseline and fail now (allowed: {_count(c.limit)})"
    )


def _count(limit: float | int) -> str:
    return str(limit) if isinstance(limit, int) else f"{limit:.0f}"


def _num(value: object) -> float:
    return math.nan if isnan(value) else float(value)  # type: ignore[arg-type]


def _cell_rows(result: GateResult, max_cells: int) -> Iterator[list[str]]:
    for rec in result.offending.head(max_cells).to_dict("records"):
        verdict = {True: "pass", False: "fail"}
        base = verdict.get(rec.get("passed_base"), "–")  # type: ignore[arg-type]
        now = verdict.get(rec.get("passed_now"), "–")  # type: ignore[arg-type]
        if rec.get("status") == "error":
            now = "error"
        elif rec.get("finish_reason_now") and not rec.get("passed_now"):
            now += f" ({rec['finish_reason_now']})"
        yield [
            str(rec["reason"])[:120],
            cell_name(rec["suite"], rec["task_id"], rec["mode"], rec["provider"], rec["epoch"]),
            base,
            now,
            *distinct_pair(
                _num(rec.get("cost_base")), _num(rec.get("cost_now", rec.get("cost_usd"))), _usd, 3
            ),
            fmt_usd(rec.get("cost_delta", math.nan), sign=True),
        ]


def _headline(result: GateResult) -> str:
    failed = result.failed_checks()
    if not failed:
        n = len(result.checks)
        return f"harness gate: PASSED ({n} checks) against {result.baseline_source}"
    return (
        f"harness gate: FAILED ({len(failed)} of {len(result.checks)} checks) against "
        f"{result.baseline_source}"
    )


def gate_text(result: GateResult, max_cells: int = 30) -> str:
    """The terminal output: headline, checks table, offending cells, warnings."""
    parts = [_headline(result), text_table(_CHECK_HEADERS, map(_check_row, result.checks))]
    n = len(result.offending)
    if n:
        parts.append(f"Offending cells ({n}):")
        parts.append(text_table(_CELL_HEADERS, _cell_rows(result, max_cells)))
        if n > max_cells:
            parts.append(f"  ... and {n - max_cells} more")
    parts += [f"warning: {escape_controls(w)}" for w in result.warnings]  # one line each
    return "\n".join(parts)


def gate_markdown(result: GateResult, max_cells: int = 50) -> str:
    """Markdown for ``$GITHUB_STEP_SUMMARY`` or a PR comment."""
    icon = ":white_check_mark:" if result.passed else ":x:"
    parts = [f"### {icon} {_headline(result)}", ""]
    parts.append(md_table(_CHECK_HEADERS, map(_check_row, result.checks), "lllrrrr"))
    n = len(result.offending)
    if n:
        parts += ["", f"**Offending cells ({n})**", ""]
        parts.append(md_table(_CELL_HEADERS, _cell_rows(result, max_cells), "llllrrr"))
        if n > max_cells:
            parts.append(f"\n... and {n - max_cells} more")
    if result.warnings:
        parts += ["", *[f"> :warning: {md_text(w)}" for w in result.warnings]]
    return "\n".join(parts) + "\n"


def _escape_annotation(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_annotations(result: GateResult) -> list[str]:
    """Workflow commands that GitHub Actions shows as annotations on the run."""
    lines = []
    for c in result.failed_checks():
        lines.append(f"::error title=harness gate::{_escape_annotation(check_message(c))}")
    for w in result.warnings:
        lines.append(f"::warning title=harness gate::{_escape_annotation(w)}")
    return lines
