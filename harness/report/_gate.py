"""The CI gate: compare a run with the committed baseline and fail on regressions.

Checks, all on the cells present in both the run and the baseline with the same model:

- ``cost``: total cost, and the cost of each suite, may rise by at most ``max_cost_increase``
  (relative: 0.10 = +10%); only cells whose cost is known on both sides count;
- ``pass_rate``: the pass rate may drop by at most ``max_pass_rate_drop`` (absolute: 0.05 = 5
  points), in total, in each suite and in each (provider, mode) group, so that one group's
  collapse cannot hide in the total;
- ``flips``: at most ``allow_flips`` cells that passed in the baseline may fail now.

Completeness is judged against the matrix the run was asked for (:class:`RequestedMatrix`, from
``bench_runs``): baseline cells outside it are "not requested", listed but not missing. Cells on
one side only, cells whose model changed and cells of unknown cost never fail the thresholds but
are listed as warnings, so nothing passes silently. Thresholds come from the arguments, else
from ``[tool.harness.gate]`` in pyproject.toml, else the defaults.
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

import pandas as pd

from harness._files import MAX_INPUT_BYTES, open_regular, read_regular
from harness._toml import loads_toml
from harness.report._baseline import Baseline, load_baseline
from harness.report._diff import diff_counts, diff_frame
from harness.report._gate_result import GateCheck, GateResult, GateThresholds
from harness.report._requested import RequestedMatrix
from harness.report._stats import sign_test, signed_rank_test
from harness.report._tables import CELL_KEY, ReportInputError, prepare_results, scored

__all__ = [
    "RequestedMatrix",
    "find_pyproject",
    "run_gate",
    "thresholds_from_pyproject",
    "write_step_summary",
]

_EPS = 1e-9


_KEYS = tuple(f.name for f in fields(GateThresholds))


def find_pyproject(start: str | Path | None = None) -> Path | None:
    """The nearest pyproject.toml in ``start`` (default: the working directory) or above."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def thresholds_from_pyproject(path: str | Path | None) -> dict[str, float | int]:
    """The ``[tool.harness.gate]`` table of ``path`` (``-`` or ``_`` in keys), validated."""
    if path is None:
        return {}
    p = Path(path)
    try:
        doc = loads_toml(read_regular(p, limit=MAX_INPUT_BYTES).decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ReportInputError(f"{p}: cannot read gate thresholds: {exc}") from None
    table: Any = doc
    for depth, part in enumerate(("tool", "harness", "gate")):
        table = table.get(part, {})
        if not isinstance(table, dict):  # `tool = 5` gave an AttributeError traceback
            name = ".".join(("tool", "harness", "gate")[: depth + 1])
            raise ReportInputError(f"{p}: [{name}] must be a table")
    out: dict[str, float | int] = {}
    given: dict[str, str] = {}
    for raw_key, value in table.items():
        key = raw_key.replace("-", "_")
        if key not in _KEYS:
            raise ReportInputError(
                f"{p}: [tool.harness.gate] unknown key {raw_key!r}; known: {', '.join(_KEYS)}"
            )
        if key in given:  # max-cost-increase and max_cost_increase: the last one won, silently
            raise ReportInputError(
                f"{p}: [tool.harness.gate] {raw_key!r} is {given[key]!r} again; give it once"
            )
        given[key] = raw_key
        want_int = key == "allow_flips"
        ok = isinstance(value, int) if want_int else isinstance(value, int | float)
        if not ok or isinstance(value, bool):
            kind = "an integer" if want_int else "a number"
            raise ReportInputError(f"{p}: [tool.harness.gate] {raw_key}: expected {kind}")
        out[key] = value
    return out


_ALPHA = 0.05


def _task_diffs(frame: pd.DataFrame, now: str, base: str) -> Any:
    """Per-task mean of ``now - base`` over the task's cells (the task is the unit)."""
    d = frame[now].astype(float) - frame[base].astype(float)
    return d.groupby([frame["suite"], frame["task_id"]]).mean().to_numpy()


def _cost_check(scope: str, both: pd.DataFrame, limit: float, significance: bool) -> GateCheck:
    known = both.dropna(subset=["cost_base", "cost_now"])
    base, now = float(known["cost_base"].sum()), float(known["cost_now"].sum())
    if known.empty:
        return GateCheck("cost", scope, math.nan, math.nan, math.nan, limit, True, "no known cost")
    change = (now - base) / base if base else (0.0 if now == 0 else math.inf)
    ok = change <= limit + _EPS
    detail = f"{len(known)} cell(s) with known cost"
    if significance and not ok:
        p = signed_rank_test(_task_diffs(known, "cost_now", "cost_base"))
        ok = p >= _ALPHA
        detail += f"; Wilcoxon p={p:.3g} over tasks" + (" (not significant)" if ok else "")
    return GateCheck("cost", scope, base, now, change, limit, ok, detail)


def _rate_check(scope: str, frame: pd.DataFrame, t: GateThresholds) -> GateCheck:
    """The pass rate of ``frame``'s cells (in both runs, same model) may drop by at most the
    limit; with ``significance``, a drop past it must also be significant over the tasks."""
    n = len(frame)
    limit = t.max_pass_rate_drop
    if not n:
        return GateCheck("pass_rate", scope, math.nan, math.nan, math.nan, limit, True, "no cell")
    base_rate = float(frame["passed_base"].mean())
    now_rate = float(frame["passed_now"].mean())
    drop = base_rate - now_rate
    ok = drop <= limit + _EPS
    detail = f"{n} cell(s) in both"
    if t.significance and not ok:
        p = sign_test(_task_diffs(frame, "passed_now", "passed_base"))
        ok = p >= _ALPHA
        detail += f"; sign test p={p:.3g} over tasks" + (" (not significant)" if ok else "")
    return GateCheck("pass_rate", scope, base_rate, now_rate, drop, limit, ok, detail)


def _completeness(
    diff: pd.DataFrame, now: pd.DataFrame, base: pd.DataFrame, t: GateThresholds
) -> tuple[list[GateCheck], list[pd.DataFrame]]:
    """Checked before any threshold: every baseline cell ran, none errored, same suites."""
    checks: list[GateCheck] = []
    offending: list[pd.DataFrame] = []
    missing = diff[diff["status"] == "missing"]
    n_base = float(len(base))
    ok = len(missing) <= t.allow_missing
    checks.append(
        GateCheck("missing_cells", "total", n_base, n_base - len(missing), float(len(missing)),
                  t.allow_missing, ok,
                  "baseline cells not in this run (--allow-missing N permits some)")
    )  # fmt: skip
    if not ok:
        offending.append(missing.assign(reason="missing from the run"))
    errored = now[now["status"] == "error"]
    checks.append(
        GateCheck("errored_cells", "total", 0.0, float(len(errored)), float(len(errored)), 0.0,
                  errored.empty, "cells that could not be scored (status error; see results.error)")
    )  # fmt: skip
    if not errored.empty:
        offending.append(errored.assign(reason="errored: " + errored["error"].astype(str)))
    base_suites, now_suites = set(base["suite"]), set(now["suite"])
    same = base_suites == now_suites
    detail = f"baseline: {', '.join(sorted(base_suites))}; run: {', '.join(sorted(now_suites))}"
    changed = float(len(base_suites ^ now_suites))
    checks.append(
        GateCheck("suites", "total", float(len(base_suites)), float(len(now_suites)), changed,
                  0.0, same, detail)
    )  # fmt: skip
    return checks, offending


_COMPARED = ["newly_failing", "newly_passing", "still_failing", "still_passing"]


def _evaluate(diff: pd.DataFrame, t: GateThresholds) -> tuple[list[GateCheck], pd.DataFrame]:
    both = diff[diff["status"].isin(_COMPARED) & ~diff["model_changed"]]
    scopes = [("total", both)] + [(f"suite {s}", g) for s, g in both.groupby("suite", sort=True)]
    checks: list[GateCheck] = []
    offending: list[pd.DataFrame] = []
    for scope, frame in scopes:
        check = _cost_check(scope, frame, t.max_cost_increase, t.significance)
        checks.append(check)
        if not check.ok:
            up = frame[frame["cost_change"] == "up"].sort_values("cost_delta", ascending=False)
            offending.append(up.assign(reason=f"cost up ({scope})"))
    flipped = both[both["status"] == "newly_failing"]
    rate_scopes = [("total", both)]
    rate_scopes += [(f"suite {s}", g) for s, g in both.groupby("suite", sort=True)]
    rate_scopes += [
        (f"{prov} / {mode}", g) for (prov, mode), g in both.groupby(["provider", "mode"], sort=True)
    ]
    rate_failed = False
    for scope, frame in rate_scopes:
        check = _rate_check(scope, frame, t)
        checks.append(check)
        rate_failed = rate_failed or not check.ok
    flips = float(len(flipped))
    flips_ok = len(flipped) <= t.allow_flips
    flips_detail = "cells that passed in the baseline and fail now"
    if t.significance and len(both) and not flips_ok:
        p = sign_test(_task_diffs(both, "passed_now", "passed_base"))
        flips_ok = p >= _ALPHA
        flips_detail += f"; sign test p={p:.3g} over tasks" + (
            " (not significant)" if flips_ok else ""
        )
    checks.append(
        GateCheck("flips", "total", 0.0, flips, flips, t.allow_flips, flips_ok, flips_detail)
    )
    if not flips_ok or rate_failed:
        offending.insert(0, flipped.assign(reason="newly failing"))
    table = pd.concat(offending) if offending else diff.iloc[0:0].assign(reason="")
    table = table.drop_duplicates(subset=list(CELL_KEY), keep="first").reset_index(drop=True)
    return checks, table


def _warnings(diff: pd.DataFrame, missing: pd.DataFrame, source: str) -> list[str]:
    out: list[str] = []

    def cells(frame: pd.DataFrame, limit: int = 5) -> str:
        names = [
            f"{r.suite}/{r.task_id} [{r.mode}, {r.provider}, e{r.epoch}]"
            for r in frame.head(limit).itertuples()
        ]
        more = f" and {len(frame) - limit} more" if len(frame) > limit else ""
        return ", ".join(names) + more

    if len(missing):
        out.append(f"{len(missing)} baseline cell(s) not in this run: {cells(missing)}")
    new = diff[diff["status"] == "new"]
    if len(new):
        out.append(
            f"{len(new)} cell(s) not in the baseline (not gated; regenerate {source} "
            f"to gate them): {cells(new)}"
        )
    changed = diff[diff["model_changed"]]
    if len(changed):
        out.append(
            f"{len(changed)} cell(s) ran a different model than the baseline (not gated; "
            f"regenerate {source}): {cells(changed)}"
        )
    both = diff[~diff["status"].isin(["new", "missing"]) & ~diff["model_changed"]]
    unknown = both[both["cost_change"] == "unknown"]
    if len(unknown):
        out.append(f"{len(unknown)} cell(s) with unknown cost left out of the cost checks")
    return out


def run_gate(
    run: pd.DataFrame,
    baseline: Baseline | pd.DataFrame | str | Path,
    thresholds: GateThresholds | None = None,
    requested: RequestedMatrix | None = None,
) -> GateResult:
    """Gate the run in ``run`` (a results DataFrame) against ``baseline`` (a loaded baseline, a
    results DataFrame, or the path of a baseline file). ``requested``: the matrix the run was
    asked for; baseline cells outside it are not requested (listed, never missing). Bad input
    raises ReportInputError."""
    t = thresholds or GateThresholds()
    if isinstance(baseline, str | Path):
        baseline = load_baseline(baseline)
    if isinstance(baseline, Baseline):
        base, source = baseline.cells, baseline.source
    else:
        base, source = prepare_results(baseline, source="baseline")[0], "the baseline"
    now, warnings = prepare_results(run, source="run")
    if now.empty:
        raise ReportInputError("run: no results to gate")
    not_requested = base.iloc[0:0]
    if requested is not None:
        inside = requested.contains(base)
        base, not_requested = base.loc[inside], base.loc[~inside]
        if len(not_requested):
            warnings.append(
                f"{len(not_requested)} baseline cell(s) not requested by this run (it asked for "
                f"{requested.describe()}): not gated, not missing; e.g. "
                + ", ".join(
                    f"{r.suite}/{r.task_id} [{r.mode}, {r.provider}, e{r.epoch}]"
                    for r in not_requested.head(3).itertuples()
                )
            )
    every = diff_frame(now, base)
    complete, incomplete = _completeness(every, now, base, t)
    # Thresholds compare scored cells only; errored ones failed the completeness check.
    diff = diff_frame(scored(now), base)
    checks, offending = _evaluate(diff, t)
    if incomplete:
        offending = pd.concat([*incomplete, offending], ignore_index=True)
    # Missing means not in the run at all, as the check says: a cell errored in both is in
    # it, and was said "not in this run" beside `missing_cells` 0 (adversary round 17, part B).
    missing = every[every["status"] == "missing"]
    warnings += _warnings(diff, missing, source)
    counts = {**diff_counts(diff), "missing": len(missing), "not_requested": len(not_requested)}
    return GateResult(complete + checks, offending, warnings, t, counts, source)


def write_step_summary(result: GateResult, env: Mapping[str, str] | None = None) -> Path | None:
    """Append the gate's Markdown to ``$GITHUB_STEP_SUMMARY`` when it is set; return the path."""
    target = (os.environ if env is None else env).get("GITHUB_STEP_SUMMARY")
    if not target:
        return None
    path = Path(target)
    fd = open_regular(
        path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, named_by_user=True
    )  # a FIFO without a reader fails at once
    with os.fdopen(fd, "a", encoding="utf-8") as fh:
        fh.write(result.to_markdown() + "\n")
    return path
