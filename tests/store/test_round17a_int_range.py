"""An integer past its column's range in a row (issue 34, adversary round 17, part A): it
passed ``prepare_row`` (an ``int`` is an ``int``) and failed the shard's flush, every row of the
run with it: ``harness run`` ended ``error: results column 'input_tokens': a value has the wrong
type: Python int too large to convert to C long``, exit 2, no row stored and the run left
``running``. Now the row is refused alone, as any row of the wrong type is."""

from __future__ import annotations

import pytest

from harness.errors import StoreError
from harness.store._rows import prepare_row

ROW = {"suite": "s", "task_id": "t", "mode": "react", "provider": "mock", "epoch": 0,
       "run_id": "r", "passed": True}  # fmt: skip


@pytest.mark.parametrize(
    ("column", "value"),
    [("input_tokens", 2**63), ("output_tokens", -(2**63) - 1), ("epoch", 2**31)],
)
def test_an_int_past_its_columns_range_makes_no_row(column: str, value: int) -> None:
    with pytest.raises(StoreError, match=f"results column '{column}': .* past the column's range"):
        prepare_row({**ROW, column: value})


def test_the_ends_of_the_range_are_taken() -> None:
    row = prepare_row({**ROW, "input_tokens": 2**63 - 1, "output_tokens": -(2**63)})
    assert (row["input_tokens"], row["output_tokens"]) == (2**63 - 1, -(2**63))
