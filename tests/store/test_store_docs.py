"""Every SQL example of docs/sql.md runs, as pasted, and returns rows on a small real database."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import harness
from harness.store import Store, crashed_row, result_row
from harness.telemetry import configure_tracing

DOC = Path(__file__).resolve().parents[2] / "docs" / "sql.md"


def statements() -> list[str]:
    blocks = re.findall(r"```sql\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    return [s.strip() for block in blocks for s in block.split(";") if s.strip()]


def test_the_doc_has_examples() -> None:
    assert len(statements()) >= 12


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("docs")
    path, spans = tmp / "harness.duckdb", tmp / "spans.jsonl"
    turns = {
        "turns": [
            {"tool_calls": [{"name": "calculator", "arguments": {"expression": "17*23"}}]},
            {"tool_calls": [{"name": "calculator", "arguments": {"expression": "1/0"}}]},
            {"text": "391", "usage": {"input_tokens": 9, "output_tokens": 2}},
        ]
    }
    with Store.open(path) as store, configure_tracing(file=spans) as tracing:
        for night, passed in enumerate((True, False)):
            run = store.begin_run(label="nightly", modes=["react", "reflexion"])
            for mode in ("react", "reflexion"):
                result = harness.run(
                    "What is 17*23?",
                    provider="mock",
                    mode=mode,
                    tools=["calculator"],
                    provider_opts=turns,
                    tracer_provider=tracing.provider,
                )
                row = result_row(result, run_id=run, suite="arithmetic", task_id="mul",
                                 passed=passed or mode == "react")  # fmt: skip
                row["cost_usd"] = 0.25 * (night + 1)
                row["finish_reason"] = "error_no_progress" if mode == "reflexion" else "stop"
                row["no_progress_snapshot"] = (
                    [{"role": "assistant", "content": "again"}] if mode == "reflexion" else None
                )
                store.write_result(row)
            store.write_result(crashed_row(run_id=run, suite="arithmetic", task_id="div",
                                           mode="react", provider="mock", epoch=0,
                                           error="RuntimeError: boom"))  # fmt: skip
            tracing.force_flush()
            store.ingest_spans(run, spans, only_run_traces=True)
            store.finish_run(run)
    return path


@pytest.mark.parametrize("sql", statements(), ids=lambda s: s.split("\n")[0][:40])
def test_each_example_runs(db: Path, sql: str) -> None:
    with Store.open(db, read_only=True) as ro:
        rows = ro.con.execute(sql).fetchall()
    assert rows, sql
