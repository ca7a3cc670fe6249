"""`harness report --format json`: the document validates against docs/report-schema.json and
carries what it promises (every comparison's effect, interval, p, corrected p, task count and
minimum detectable difference; the gate's totals)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import click
import jsonschema
import pandas as pd
import pytest
from click.testing import CliRunner

from harness.cli._report import report
from harness.report import build_report
from harness.report._json import render_json

store = pytest.importorskip("harness.store")

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "docs" / "report-schema.json").read_text()
)
Paired = Callable[..., pd.DataFrame]
Counts = Callable[[int, int, int, int], list[tuple[bool, bool]]]


def _validate(doc: object) -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)


@pytest.fixture
def frame(paired: Paired, counts: Counts) -> pd.DataFrame:
    real = paired("react", "reflexion", counts(20, 3, 9, 18), provider="llamacpp-gemma")
    real.loc[(real["mode"] == "reflexion") & ~real["passed"], "finish_reason"] = "error_no_progress"
    small = paired("react", "plan_and_solve", counts(1, 0, 3, 0), provider="live")
    scripted = paired("react", "reflexion", counts(2, 0, 2, 0), provider="mock")
    both = pd.concat([real, small, scripted], ignore_index=True)
    both.loc[0, ["passed", "status", "error"]] = (False, "error", "boom")
    both.loc[1, "cost_usd"] = None
    return both


def test_document_validates_and_has_every_comparison(frame: pd.DataFrame) -> None:
    doc = json.loads(render_json(build_report(frame, n_resamples=200)))
    _validate(doc)
    assert doc["scripted_providers"] == ["mock"]
    assert len(doc["comparisons"]) == 3
    by = {c["provider"]: c for c in doc["comparisons"]}
    real = by["llamacpp-gemma"]
    for key in ("diff", "diff_ci_low", "diff_ci_high", "p_value", "p_holm", "tasks", "mdd"):
        assert real[key] is not None, key
    assert real["notes"][0].startswith("react stops on the strict no-progress check")
    four = by["live"]
    assert (four["tasks"], four["can_reach"], four["mdd"], four["min_p"]) == (4, False, None, 0.125)
    mock = by["mock"]
    assert mock["scripted"] is True
    assert mock["p_value"] is None
    assert mock["p_holm"] is None
    assert len(doc["headline"]) == 2  # llamacpp-gemma and live, not mock
    # The gate's totals: per cell, errored cells apart.
    total = doc["totals"]["total"]
    assert (total["cells"], total["errored"], total["scored"]) == (len(frame), 1, len(frame) - 1)
    assert {(g["provider"], g["mode"]) for g in doc["totals"]["groups"]} == {
        (p, m) for p, m in frame[["provider", "mode"]].drop_duplicates().itertuples(index=False)
    }


def test_schema_rejects_a_broken_document(frame: pd.DataFrame) -> None:
    doc = json.loads(render_json(build_report(frame, n_resamples=200)))
    del doc["comparisons"][0]["mdd"]
    with pytest.raises(jsonschema.ValidationError):
        _validate(doc)


def test_cli_writes_the_formats_asked_for(frame: pd.DataFrame, tmp_path: Path) -> None:
    db = tmp_path / "h.duckdb"
    with store.Store.open(db) as s:
        s.begin_run(run_id="r1")
        s.write_results(frame.assign(run_id="r1"))
        s.finish_run("r1")
    group = click.Group(commands={"report": report})
    out = tmp_path / "out"
    res = CliRunner().invoke(
        group,
        ["report", "--db", str(db), "--out", str(out), "--format", "md,html,json",
         "--resamples", "200"],
        catch_exceptions=False,
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in out.iterdir()) == ["report.html", "report.json", "report.md"]
    _validate(json.loads((out / "report.json").read_text()))
    only = tmp_path / "only"
    res = CliRunner().invoke(
        group, ["report", "--db", str(db), "--out", str(only), "--format", "json"]
    )
    assert res.exit_code == 0, res.output
    assert [p.name for p in only.iterdir()] == ["report.json"]
    bad = CliRunner().invoke(group, ["report", "--db", str(db), "--format", "pdf"])
    assert bad.exit_code == 2
    assert "--format pdf" in bad.output
