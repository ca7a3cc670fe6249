"""The report's BFCL section, from a real stored run: BFCL tasks on the mock into a temporary
DuckDB file (some entries made to answer in text only, so accuracies are not all 100%), read back
by ``harness report`` in Markdown, HTML and JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner

pytest.importorskip(
    "bfcl_eval",
    reason="bfcl-eval is not installed (pip install --no-deps bfcl-eval==2026.3.23 mpmath)",
)
pytest.importorskip(
    "mpmath", reason="mpmath is not installed (pip install --no-deps bfcl-eval==2026.3.23 mpmath)"
)

import jsonschema

from harness.bench._session import BenchRequest, run_bench
from harness.cli._report import report as report_cmd
from harness.report import build_report
from harness.report._bfcl import GROUPS, bfcl_cells
from harness.report._sections import report_sections
from harness.report._stats import wilson_interval
from harness.suites import SOURCES
from harness.suites._bfcl_data import CATEGORIES
from harness.suites._bfcl_source import bfcl_source

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "docs" / "report-schema.json").read_text()
)
IDS = [*(f"simple_python_{i}" for i in range(6)), *(f"irrelevance_{i}" for i in range(4)),
       "multi_turn_base_0", "multi_turn_base_1"]  # fmt: skip
#: Answer in text only (no call): the AST and multi-turn ones fail, the irrelevance one passes.
SILENT = {"simple_python_1", "simple_python_3", "simple_python_5", "irrelevance_1",
          "multi_turn_base_1"}  # fmt: skip


def _source(argument: str | None, options: Any) -> Any:
    suite = bfcl_source(None, {"categories": ["simple_python", "irrelevance", "multi_turn_base"],
                               "ids": IDS})  # fmt: skip
    for task in suite.tasks:
        if task.id in SILENT and task.mock is not None:
            quiet = [t for t in task.mock.turns if not t.get("tool_calls")]
            task.mock = task.mock.model_copy(update={"turns": quiet})
    return suite


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    SOURCES.register("bfcl-report-test", _source, replace=True)
    path = tmp_path_factory.mktemp("bfcl-report") / "harness.duckdb"
    run_bench(
        BenchRequest(
            suites=["bfcl-report-test:x"],
            modes=("react", "reflexion"),
            providers=("mock",),
            epochs=2,
            db=path,
            trace_file=path.parent / "spans.jsonl",
            progress=False,
        )
    )
    return path


@pytest.fixture(scope="module")
def written(db: Path) -> Path:
    out = db.parent / "report"
    result = CliRunner().invoke(
        report_cmd, ["--db", str(db), "--out", str(out), "--format", "md,html,json"]
    )
    assert result.exit_code == 0, result.output
    return out


def test_the_groups_cover_every_category_once() -> None:
    assert sorted(c for g in GROUPS.values() for c in g) == sorted(CATEGORIES)


@pytest.mark.slow  # a 48-cell BFCL run: its checker runs in worker processes
def test_accuracy_per_group_and_category_with_intervals_over_entries(written: Path) -> None:
    doc = json.loads((written / "report.json").read_text())
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    acc = {(r["name"], r["mode"]): r for r in doc["bfcl"]["accuracy"]}
    for mode in ("react", "reflexion"):
        simple = acc[("simple_python", mode)]
        assert (simple["entries"], simple["cells"], simple["passed"]) == (6, 12, 6)
        assert simple["accuracy"] == 0.5
        assert (simple["ci_low"], simple["ci_high"]) == pytest.approx(wilson_interval(3, 6))
        assert acc[("non-live AST", mode)]["accuracy"] == 0.5  # its only category here
        assert acc[("irrelevance", mode)]["accuracy"] == 1.0  # silence passes irrelevance
        assert acc[("relevance", mode)]["entries"] == 4
        turns = acc[("multi_turn_base", mode)]
        assert (turns["entries"], turns["accuracy"]) == (2, 0.5)
        assert acc[("multi-turn", mode)]["accuracy"] == 0.5
    assert ("live AST", "react") not in acc  # no live entry ran: no row
    pairs = {(c["mode_a"], c["mode_b"]) for c in doc["bfcl"]["comparisons"]}
    assert pairs == {("react", "reflexion")}
    assert "zero-shot" in doc["bfcl"]["note"]


@pytest.mark.slow  # a 48-cell BFCL run: its checker runs in worker processes
def test_markdown_and_html_show_the_section_beside_the_comparisons(written: Path) -> None:
    md = (written / "report.md").read_text()
    section = md.split("## BFCL accuracy by group and category")[1].split("\n## ")[0]
    # Each cell says how many entries its accuracy is over (plain characters in Markdown).
    assert "| non-live AST | 50.0% of 6 (19-81%) | 50.0% of 6 (19-81%) |" in section
    assert "| - simple_python | 50.0% of 6 " in section
    assert "| multi-turn | 50.0% of 2 (9-91%) |" in section
    assert "3-shot per category, from entries of its own category that are excluded" in section
    assert "BFCL's leaderboard is zero-shot" in section
    assert md.index("## BFCL accuracy") < md.index("## BFCL: paired mode comparisons")
    assert md.index("## BFCL: paired mode comparisons") < md.index("## pass@k")
    html = (written / "report.html").read_text()
    assert '<section id="bfcl">' in html
    assert '<section id="bfcl-comparisons">' in html
    assert "<td>· simple_python</td>" in html


def test_a_run_without_bfcl_cells_has_no_bfcl_section(rows: Any) -> None:
    frame = rows(
        {"task_id": "simple_python_0"},  # a BFCL-like id in another suite: not BFCL
        {"suite": "bfcl", "task_id": "not_a_category_1"},
    )
    report = build_report(frame, n_resamples=100)
    assert report.bfcl is None
    assert not [s for s in report_sections(report) if s.key.startswith("bfcl")]
    assert bfcl_cells(pd.DataFrame(columns=["suite", "task_id"])).empty
