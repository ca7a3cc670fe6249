"""The committed baseline file (``reports/baseline.json``) that the gate compares runs with.

It holds one entry per matrix cell (suite, task, mode, provider, epoch) with its verdict, model,
finish reason, cost and tokens, plus totals for people reading the diff in a pull request. Cells
are sorted and the JSON is indented, so a regenerated baseline diffs line by line. Unknown costs
are ``null``, never 0.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from harness._files import read_regular, write_atomic
from harness._version import __version__
from harness.report._tables import CELL_KEY, ReportInputError, prepare_results

__all__ = [
    "BASELINE_FORMAT",
    "BASELINE_VERSION",
    "MAX_BASELINE_BYTES",
    "Baseline",
    "baseline_save",
    "load_baseline",
]

BASELINE_FORMAT = "harness-baseline"
BASELINE_VERSION = 1
#: A baseline file larger than this is refused before it is read (a line is about 300 bytes
#: per cell: some 900,000 cells); a 1 GB sparse file held 2.3 GB to fail.
MAX_BASELINE_BYTES = 256 << 20
_CELL_FIELDS = (
    *CELL_KEY,
    "model",
    "passed",
    "finish_reason",
    "cost_usd",
    "input_tokens",
    "output_tokens",
)


@dataclass(frozen=True)
class Baseline:
    """A loaded baseline: the cells as a results-shaped DataFrame and the file's metadata."""

    cells: pd.DataFrame
    meta: dict[str, Any] = field(default_factory=dict)
    source: str = "baseline"


def _clean(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item"):  # numpy scalar
        return _clean(value.item())
    return value


def _totals(cells: pd.DataFrame) -> dict[str, Any]:
    cost = cells["cost_usd"].dropna()
    n = len(cells)
    return {
        "cells": n,
        "passed": int(cells["passed"].sum()),
        "pass_rate": round(float(cells["passed"].mean()), 6) if n else None,
        "cost_usd": round(float(cost.sum()), 10) if len(cost) else None,
        "cost_unknown": n - len(cost),
    }


def _dumps(doc: dict[str, Any]) -> str:
    """Indented metadata, then one cell per line: readable, and a flip is a one-line diff."""
    head = json.dumps({k: v for k, v in doc.items() if k != "cells"}, indent=1, allow_nan=False)
    cells = ",\n".join("  " + json.dumps(c, allow_nan=False) for c in doc["cells"])
    body = f'\n "cells": [\n{cells}\n ]\n' if cells else '\n "cells": []\n'
    return head[:-2] + "," + body + "}\n"


def baseline_save(
    df: pd.DataFrame,
    path: str | Path,
    *,
    run_id: str | None = None,
    label: str | None = None,
) -> dict[str, Any]:
    """Write the baseline of the run in ``df`` to ``path`` (parent folders are created).

    Returns the JSON document written.
    """
    cells, _ = prepare_results(df, source="run")
    if cells.empty:
        raise ReportInputError("run: no results to save as a baseline")
    cells = cells.sort_values(list(CELL_KEY), kind="stable").reset_index(drop=True)
    if run_id is None and cells["run_id"].notna().any():
        ids = sorted({str(r) for r in cells["run_id"].dropna()})
        run_id = ids[0] if len(ids) == 1 else None
    records = [
        {f: _clean(v) for f, v in zip(_CELL_FIELDS, row, strict=True)}
        for row in cells[list(_CELL_FIELDS)].itertuples(index=False, name=None)
    ]
    for rec in records:
        for tok in ("input_tokens", "output_tokens"):
            if rec[tok] is not None:
                rec[tok] = int(rec[tok])
    _check_saved(records, run_id)
    doc: dict[str, Any] = {
        "format": BASELINE_FORMAT,
        "version": BASELINE_VERSION,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "harness_version": __version__,
        "run_id": run_id,
        "label": label,
        "totals": _totals(cells),
        "suites": {str(s): _totals(g) for s, g in cells.groupby("suite", sort=True)},
        "cells": records,
    }
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, _dumps(doc), named_by_user=True)
    return doc


def _check_saved(records: list[dict[str, Any]], run_id: str | None) -> None:
    """Refuse to write a baseline that :func:`load_baseline` would refuse: a database edited
    by hand (a cost of -5 or 1e308 twice, a negative token count) gave a file the gate then
    rejected, or a ``ValueError`` traceback for a total past the largest float."""
    where = f"baseline of run {run_id}" if run_id else "baseline"
    for i, rec in enumerate(records):
        try:
            _check_numbers(where, i, rec)
        except ReportInputError as exc:
            cell = f"{rec['suite']}/{rec['task_id']} [{rec['mode']}, {rec['provider']}]"
            raise ReportInputError(
                f"{exc}; the database holds it for {cell}: nothing written"
            ) from None
    if not math.isfinite(sum(float(r.get("cost_usd") or 0) for r in records)):
        raise ReportInputError(
            f"{where}: field cells[*].cost_usd: the costs add up past the largest number "
            "(not a cost in dollars); nothing written"
        )


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number a baseline may hold")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object of the baseline; a key given twice is refused (parsers disagree on which one
    counts: a reviewer's tool may show the first, Python takes the last)."""
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise ValueError(f"key {key!r} is given twice in one object")
        seen.add(key)
    return dict(pairs)


#: The text fields naming a cell.
_NAMES = ("suite", "task_id", "mode", "provider")

#: The largest token count a baseline may hold (it is stored as a 64-bit integer).
_MAX_TOKENS = 2**63 - 1


def _check_numbers(p: Path | str, i: int, cell: dict[str, Any]) -> None:
    """A cell's cost is a finite number of dollars, at least 0 (or null); its token counts and
    epoch are whole numbers a 64-bit integer holds (1e400, -Infinity and NaN are refused)."""
    cost = cell.get("cost_usd")
    if cost is not None:
        if not isinstance(cost, int | float) or isinstance(cost, bool):
            raise ReportInputError(f"{p}: field cells[{i}].cost_usd: expected a number or null")
        try:
            finite = math.isfinite(float(cost))
        except OverflowError:
            finite = False
        if not finite or cost < 0:
            shown = f"{cost!r}" if isinstance(cost, float) or abs(cost) < 10**15 else "huge"
            raise ReportInputError(
                f"{p}: field cells[{i}].cost_usd: {shown} is not a cost (a finite number of "
                "dollars, 0 or more)"
            )
    for key in ("input_tokens", "output_tokens", "epoch"):
        value = cell.get(key)
        if value is None and key != "epoch":
            continue
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= _MAX_TOKENS:
            raise ReportInputError(
                f"{p}: field cells[{i}].{key}: expected a whole number from 0 to {_MAX_TOKENS}"
                + ("" if key == "epoch" else " or null")
            )


def load_baseline(path: str | Path) -> Baseline:
    """Read a baseline file; :class:`ReportInputError` names the file and the bad field."""
    p = Path(path)
    try:  # a regular file only: a FIFO would block the read until killed
        raw = read_regular(p, limit=MAX_BASELINE_BYTES)
        doc = json.loads(
            raw.decode("utf-8"), parse_constant=_no_constant, object_pairs_hook=_no_duplicates
        )
    except FileNotFoundError:
        raise ReportInputError(
            f"{p}: baseline file not found (write one with `harness baseline save -o {p}`)"
        ) from None
    except RecursionError:
        raise ReportInputError(f"{p}: not a JSON baseline: nested too deeply") from None
    except OSError as exc:
        raise ReportInputError(f"{p}: not a readable baseline: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise ReportInputError(f"{p}: not a readable JSON baseline: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != BASELINE_FORMAT:
        raise ReportInputError(f"{p}: field format: expected {BASELINE_FORMAT!r}")
    version = doc.get("version")
    if not isinstance(version, int) or version > BASELINE_VERSION:
        raise ReportInputError(
            f"{p}: field version: {version!r} is not supported by harness {__version__} "
            f"(reads up to {BASELINE_VERSION})"
        )
    cells = doc.get("cells")
    if not isinstance(cells, list):
        raise ReportInputError(f"{p}: field cells: expected a list of cells")
    seen: dict[tuple[Any, ...], int] = {}
    for i, cell in enumerate(cells):
        if not isinstance(cell, dict):
            raise ReportInputError(f"{p}: field cells[{i}]: expected an object")
        for key in (*CELL_KEY, "passed"):
            if cell.get(key) is None:
                raise ReportInputError(f"{p}: field cells[{i}].{key}: missing")
        if not isinstance(cell["passed"], bool):
            raise ReportInputError(f"{p}: field cells[{i}].passed: expected true or false")
        for key in (*_NAMES, "model", "finish_reason"):  # a list or true was shown as "True"
            if not isinstance(cell.get(key, ""), str | None) or (key in _NAMES and not cell[key]):
                raise ReportInputError(f"{p}: field cells[{i}].{key}: expected a name (text)")
            if (where := _lone_surrogate(cell.get(key))) is not None:  # a "\\ud800" escape
                raise ReportInputError(  # (a UnicodeEncodeError traceback when looked up)
                    f"{p}: field cells[{i}].{key}: a lone surrogate at character {where}, "
                    "not text; regenerate the baseline"
                )
        _check_numbers(p, i, cell)
        # The same cell twice (passed, then failed): the last one counted, silently, while a
        # reviewer reads the first (the baseline's pass rate was 0 %, not 100 %).
        first = seen.setdefault(tuple(cell[k] for k in CELL_KEY), i)
        if first != i:
            raise ReportInputError(
                f"{p}: field cells[{i}]: the same cell as cells[{first}] ({cell['suite']}/"
                f"{cell['task_id']} [{cell['mode']}, {cell['provider']}, e{cell['epoch']}]); "
                "give each cell once"
            )
    # Each cost is finite, but their sum may not be (two of 1.7e308): the gate's tables then
    # failed with OverflowError. Costs are 0 or more, so every partial sum is at most this.
    if not math.isfinite(sum(float(c.get("cost_usd") or 0) for c in cells)):
        raise ReportInputError(
            f"{p}: field cells[*].cost_usd: the costs add up past the largest number "
            "(not a cost in dollars)"
        )
    frame = pd.DataFrame(cells, columns=list(_CELL_FIELDS))
    frame["cost_usd"] = frame["cost_usd"].astype("float64")
    prepared, _ = prepare_results(frame, source=str(p))
    meta = {k: v for k, v in doc.items() if k != "cells"}
    return Baseline(cells=prepared, meta=meta, source=str(p))


def _lone_surrogate(value: object) -> int | None:
    """Where ``value`` (a JSON string may spell one as an escape) holds a lone surrogate."""
    if isinstance(value, str):
        for i, char in enumerate(value):
            if "\ud800" <= char <= "\udfff":
                return i
    return None
