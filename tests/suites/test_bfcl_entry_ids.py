"""``expect: {kind: bfcl, entry: ...}`` is checked when the suite is validated (adversary round 5,
issue 34 item 17: ``entry: "../../../etc/passwd"`` passed ``suites validate`` and failed only when
grading)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main
from harness.grading import parse_grader


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ("../../../etc/passwd", "is not a BFCL entry id"),
        ("simple_python_0/../../x", "is not a BFCL entry id"),
        ("no_such_category_3", "unknown BFCL category 'no_such_category'"),
        # YAML's "\n": a real id then a line break passed (``$`` matches before a last \n)
        ("simple_python_0\\n", "is not a BFCL entry id"),
        # well formed, but BFCL has no such entry (adversary round 6): failed only when grading
        ("simple_python_99999", "no BFCL entry 'simple_python_99999' in category 'simple_python'"),
    ],
)
def test_a_bad_bfcl_entry_fails_suites_validate(tmp_path: Path, entry: str, said: str) -> None:
    path = tmp_path / "b.yaml"
    path.write_text(
        f'suite: b\ntasks:\n  - {{id: a, prompt: hi, expect: {{kind: bfcl, entry: "{entry}"}}}}\n'
    )
    result = CliRunner().invoke(main, ["suites", "validate", str(path)])
    assert result.exit_code == 2, result.output
    assert "task 'a': expect.entry" in result.stderr
    assert said in result.stderr


@pytest.mark.parametrize("entry", ["simple_python_0", "live_simple_106-63-0", "multi_turn_base_0"])
def test_real_entry_ids_validate(entry: str) -> None:
    assert parse_grader({"kind": "bfcl", "entry": entry}).entry == entry  # type: ignore[attr-defined]
