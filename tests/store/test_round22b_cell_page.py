"""The viewer's cell page bounded its transcript only (round 21, the lead): the same page shows
the cell's deliverable, error, diagnostics, grader explanation and provider calls whole. A
structured-mode deliverable is a model's reply (up to 64 MiB); a deliverable of 100 MB made a
104 MB page, 300,000 provider calls edited in a 52 MB page (adversary round 22, part B). Now
each text is cut to twice the writer's message bound and the calls to the writer's message
count, and the page says what it left out. Real DuckDB, the real app."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from tests.e2e.edited_store import edited, store_two_cells

BIG = 10 << 20


def _call(i: int) -> dict[str, object]:
    return {"index": i, "purpose": "main", "model": "m", "iteration": i, "cost_usd": 0.0,
            "latency_ms": 1.0, "finish_reason": "stop", "error": None,
            "usage": {"input_tokens": 1, "output_tokens": 1}}  # fmt: skip


@pytest.mark.timeout(300)
def test_the_cell_page_cuts_every_column(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from harness.view import ViewConfig, create_app

    db = edited(store_two_cells(tmp_path / "stored"), tmp_path / "db", "SELECT 1")
    con = duckdb.connect(str(db))
    row = con.execute("SELECT cell_key, run_id FROM results_compacted LIMIT 1").fetchone()
    assert row is not None
    key, run_id = row
    con.execute(
        "UPDATE results_compacted SET deliverable = ?, error = ?, grader_explanation = ?, "
        "error_diagnostic = ?, calls = ? WHERE cell_key = ?",
        [json.dumps({"answer": "d" * BIG}), "e" * BIG, "g" * BIG, json.dumps(["x" * BIG]),
         json.dumps([_call(i) for i in range(5_000)]), key],
    )  # fmt: skip
    con.close()
    client = TestClient(create_app(ViewConfig(db)), base_url="http://127.0.0.1")
    page = client.get(f"/runs/{run_id}/cell", params={"key": key})
    assert page.status_code == 200
    assert len(page.text) < 1_000_000  # 52 MB before
    assert "deliverable: " in page.text
    assert "4600 provider calls not shown" in page.text
    assert page.text.count('<td class="r">') == 400 * 4  # the calls shown, four numbers each
