"""Where a user reads about suites (README and docs/suites.md), one plain warning says that a
suite file runs code, and names every way it does (adversary round 5, issue 34 item 20: the
warning named tools and python graders only; adversary round 8: a profile whose ``kind`` is a
``package.module:attr`` reference, in a project's ``harness.toml``, imports it too; round 11:
a turn's ``add_tools:`` imports its references as ``tools:`` does, and was not named; round 12:
``only_modes:`` imports its references as ``extra_modes:`` does, when the suite is validated)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("doc", ["README.md", "docs/suites.md"])
def test_the_trust_warning_names_every_way_a_suite_runs_code(doc: str) -> None:
    text = (ROOT / doc).read_text(encoding="utf-8")
    warnings = re.findall(r"\*\*A suite file runs code with your user's rights[^*]*\*\*", text)
    assert len(warnings) == 1, f"{doc}: say it once"
    start = text.index(warnings[0])
    paragraph = " ".join(text[start : text.index("\n\n", start)].split())
    for way in ("tools_module:", "`tools:`", "`add_tools:`", "python graders", "`extra_modes:`",
                "`only_modes:`", "a grader's `kind:`", "`source: {kind:}`", "unsandboxed",
                "`harness.toml`", "whose `kind` is such a reference"):  # fmt: skip
        assert way in paragraph, f"{doc}: the warning does not name {way}"
