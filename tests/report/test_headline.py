"""The ten-second verdict: one headline per real provider, from the statistics, honest about
significance, above the full sentence; in plain characters in Markdown.

The expected figures are worked out from the data each test builds (rates, point gaps, which
mode is cheaper), not read from the code's output."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pandas as pd

from harness.report import build_report, render_html, render_markdown
from harness.report._format import PLAIN_CHARS
from harness.report._json import report_document

Paired = Callable[..., pd.DataFrame]
Counts = Callable[[int, int, int, int], list[tuple[bool, bool]]]
SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "docs" / "report-schema.json").read_text()
)


def _one(df: pd.DataFrame) -> tuple[str, str]:
    report = build_report(df, n_resamples=200)
    assert len(report.verdicts) == 1
    v = report.verdicts[0]
    assert v.sentence == report.headline[0]
    return v.headline, v.sentence


def test_a_clear_difference_is_called_significant(paired: Paired, counts: Counts) -> None:
    # 40 tasks: react passes 30 (75%), reflexion 10 (25%); the 20 tasks that differ all go
    # react's way (sign test p = 2 * 0.5**20). Reflexion costs half on every task.
    df = paired("react", "reflexion", counts(10, 20, 0, 10), costs=[(0.02, 0.01)] * 40)
    head, sentence = _one(df)
    assert head == (
        "On mock-1 (live): react passes most often, 75% of 40 tasks; reflexion is 50 points "
        "lower (significant); reflexion costs least (significant)."
    )
    assert sentence.startswith("live: react passes most often (75.0% of 40 tasks)")


def test_no_evidence_reads_not_significant(paired: Paired, counts: Counts) -> None:
    # react 14 of 40 (35%), reflexion 12 (30%): 6 tasks differ, 4 to 2 (p = 0.69).
    head, _ = _one(paired("react", "reflexion", counts(10, 4, 2, 24)))
    assert head == (
        "On mock-1 (live): react passes most often, 35% of 40 tasks; reflexion is 5 points "
        "lower (not significant); every mode costs the same."
    )


def test_too_few_tasks_say_so(paired: Paired, counts: Counts) -> None:
    # 4 tasks: no outcome can reach p < 0.05 (the smallest p is 0.125).
    head, _ = _one(paired("react", "reflexion", counts(1, 2, 0, 1)))
    assert "reflexion is 50 points lower (too few tasks to tell)" in head
    assert "significant" not in head


def test_a_tie_is_no_detectable_difference(paired: Paired, counts: Counts) -> None:
    head, _ = _one(paired("react", "reflexion", counts(10, 0, 0, 10)))
    assert head.startswith("On mock-1 (live): react and reflexion pass equally often, 50% of 20")
    assert "reflexion: no detectable difference on the tasks both ran" in head


def test_the_cheaper_mode_without_evidence_is_not_significant(
    paired: Paired, counts: Counts
) -> None:
    # reflexion is cheaper on 2 tasks of 20 and the same on the rest: too little to claim.
    costs = [(0.02, 0.01)] * 2 + [(0.01, 0.01)] * 18
    head, _ = _one(paired("react", "reflexion", counts(10, 0, 0, 10), costs=costs))
    assert head.endswith("reflexion costs least (not significant).")


def test_scripted_providers_get_no_headline(paired: Paired, counts: Counts) -> None:
    df = paired("react", "reflexion", counts(10, 20, 0, 10), provider="mock")
    report = build_report(df, n_resamples=200)
    assert report.verdicts == []
    assert "No real model ran" in render_markdown(report)


def test_markdown_shows_the_headline_in_bold_above_the_sentence_in_plain_characters(
    paired: Paired, counts: Counts
) -> None:
    df = paired("react", "reflexion", counts(10, 20, 0, 10), costs=[(0.02, 0.01)] * 40)
    report = build_report(df, n_resamples=200)
    md = render_markdown(report)
    v = report.verdicts[0]
    head = md.index(f"- **{v.headline}**")
    assert md.index("  live: react passes most often") > head
    # The sentence's tiny p reads as it is written, not as an HTML entity.
    assert "Holm-adjusted p<0.001" in md
    assert "&lt;" not in md
    fancy = sorted({chr(c) for c in PLAIN_CHARS} & set(md))
    assert fancy == [], f"typographic characters left in report.md: {fancy}"
    html = render_html(report)
    assert f'<strong class="headline">{v.headline}</strong>' in html


def test_json_carries_the_verdicts_and_validates(paired: Paired, counts: Counts) -> None:
    df = pd.concat(
        [
            paired("react", "reflexion", counts(10, 20, 0, 10), provider="live"),
            paired("react", "reflexion", counts(10, 4, 2, 24), provider="other"),
        ]
    )
    report = build_report(df, n_resamples=200)
    doc = report_document(report)
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    assert [v["provider"] for v in doc["verdicts"]] == ["live", "other"]
    assert [v["sentence"] for v in doc["verdicts"]] == doc["headline"]
    assert doc["verdicts"][1]["headline"].startswith("On mock-1 (other): react passes most")


def test_modes_without_a_shared_task_are_not_compared(rows: Callable[..., pd.DataFrame]) -> None:
    # react ran task t (passed), reflexion task u (failed): nothing to pair.
    df = rows({"task_id": "t"}, {"task_id": "u", "mode": "reflexion", "passed": False})
    head, _ = _one(df)
    assert head == (
        "On mock-1 (live): react passes most often, 100% of 1 tasks; reflexion next, 0% "
        "(no task in common to compare); every mode costs the same."
    )
