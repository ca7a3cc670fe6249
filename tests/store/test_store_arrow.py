"""Shard columns built from buffers (harness.store._arrow) equal what ``pa.array`` builds, and a
run never imports pandas (which ``pa.array`` would)."""

from __future__ import annotations

import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.errors import StoreError
from harness.store._arrow import column, empty_table
from harness.store._rows import ARROW_SCHEMA, prepare_row, prepared_to_arrow

ROOT = Path(__file__).resolve().parents[2]

_naive_times = st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2200, 1, 1))
_aware_times = st.datetimes(
    min_value=datetime(1900, 1, 2),
    max_value=datetime(2200, 1, 1),
    timezones=st.sampled_from([UTC, timezone(timedelta(hours=-7, minutes=-30))]),
)
_VALUES: dict[pa.DataType, st.SearchStrategy[Any]] = {
    pa.string(): st.text(),
    pa.binary(): st.binary(),
    pa.int64(): st.integers(-(2**63), 2**63 - 1),
    pa.int32(): st.integers(-(2**31), 2**31 - 1),
    pa.float64(): st.floats(allow_nan=False) | st.integers(-(2**53), 2**53),
    pa.bool_(): st.booleans(),
    pa.timestamp("us"): _naive_times | _aware_times,
}


@pytest.mark.parametrize("kind", list(_VALUES), ids=str)
@given(data=st.data())
# No deadline: hypothesis's default (200 ms an example) is a wall-clock bound, which a loaded
# machine breaks; the examples drawn stay the same.
@settings(deadline=None)
def test_a_column_equals_what_pa_array_builds(kind: pa.DataType, data: st.DataObject) -> None:
    values = data.draw(st.lists(st.none() | _VALUES[kind], max_size=40))
    built = column(values, kind)
    built.validate(full=True)
    assert built.equals(pa.array(values, type=kind))
    assert built.null_count == values.count(None)


def test_nan_and_infinities_survive_a_float_column() -> None:
    values = [float("nan"), float("inf"), -float("inf"), None, 0.5]
    got = column(values, pa.float64()).to_pylist()
    assert got[0] != got[0]  # NaN
    assert got[1:] == [float("inf"), -float("inf"), None, 0.5]


@pytest.mark.parametrize(
    ("kind", "value"),
    [
        (pa.int64(), "seven"),
        (pa.int64(), 1.5),
        (pa.int32(), 2**31),
        (pa.int64(), 2**63),
        (pa.float64(), "x"),
    ],
)
def test_a_value_that_does_not_fit_raises(kind: pa.DataType, value: Any) -> None:
    with pytest.raises((TypeError, ValueError, OverflowError, UnicodeError)):
        column([None, value], kind)


def test_a_lone_surrogate_is_replaced_not_raised() -> None:
    # not UTF-8: one cell's odd text must never fail the shard (issue 27)
    got = column([None, "ok", "a\ud800b", "f\udcff"], pa.string()).to_pylist()
    assert got == [None, "ok", "a\ufffdb", "f\ufffd"]


def test_a_wrong_value_in_a_shard_row_names_the_column() -> None:
    row = prepare_row(
        {
            "run_id": "r",
            "suite": "s",
            "task_id": "t",
            "mode": "react",
            "provider": "mock",
            "epoch": 1,
            "passed": True,
        }
    )
    row["iterations"] = "three"  # past prepare_row's checks, as a bug in a caller would be
    with pytest.raises(StoreError, match="results column 'iterations'"):
        prepared_to_arrow([row])


def test_the_empty_table_has_the_schema_and_no_rows() -> None:
    table = empty_table(ARROW_SCHEMA)
    assert table.schema.equals(ARROW_SCHEMA)
    assert table.num_rows == 0


@pytest.mark.slow
def test_a_stored_run_never_imports_pandas(tmp_path: Path) -> None:
    """pandas costs ~55 MB of a run's memory (docs/performance.md): the run path (open the store,
    write result and span shards, compact) must not import it; the report does."""
    code = (
        "import sys\n"
        "from harness.cli import main\n"
        "try:\n"
        "    main(sys.argv[1:])\n"
        "except SystemExit as exc:\n"
        "    assert not exc.code, exc.code\n"
        "print('pandas' in sys.modules)\n"
    )
    sandboxed = {"code.yaml", "humaneval.yaml", "humaneval_direct.yaml"}  # graded in bwrap
    suites = [str(p) for p in sorted((ROOT / "suites").glob("*.yaml")) if p.name not in sandboxed]
    args = [
        "run", *suites, "--providers", "mock", "--epochs", "1",
        "--db", str(tmp_path / "h.duckdb"), "--no-progress",
    ]  # fmt: skip
    out = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    assert out.returncode == 0, out.stderr + out.stdout
    assert out.stdout.strip().splitlines()[-1] == "False", out.stdout
    con = duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True)
    try:  # the run did store its cells and spans
        cells = re.search(r"(\d+)/\1 cells", out.stderr)
        assert cells is not None, out.stderr
        assert con.execute("SELECT count(*) FROM results").fetchone() == (int(cells[1]),)
        spans = con.execute("SELECT count(*) FROM spans").fetchone()
        assert spans is not None
        assert spans[0] > int(cells[1])  # several spans per cell
    finally:
        con.close()
