"""Model text cannot drive a terminal or reverse text through a report (issue 27, adversary
round 3): a reply with NUL, ESC sequences and a right-to-left override (U+202E) reaches
report.md and report.html as escapes (``\\x1b``, ``\\u202e``), so ``cat report.md`` runs no
sequence; report.json stays plain JSON (it spells such characters as JSON escapes). Real
``harness run`` and ``harness report`` subprocesses on the scripted mock.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

#: Spawns processes, sandboxes, browsers, clusters or servers (the fast loop skips it).
pytestmark = pytest.mark.slow

SHOWN = "nul\\x00here \\x1b[31mred\\x1b[0m \\u202eevil\\u202c"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

SUITE = """\
suite: odd
tasks:
  - id: odd
    prompt: p
    expect: {kind: contains, value: x}
    mock:
      turns:
        - text: "nul\\0here \\e[31mred\\e[0m \\u202Eevil\\u202C"
"""


def _harness(root: Path, *args: str) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "harness.cli", *args], cwd=root, capture_output=True, text=True,
        timeout=180, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr


def test_reports_escape_control_characters_of_model_text(tmp_path: Path) -> None:
    (tmp_path / "odd.yaml").write_text(SUITE, encoding="utf-8")
    _harness(tmp_path, "run", "odd.yaml", "--providers", "mock", "--modes", "react",
             "--no-progress", "--db", "h.duckdb")  # fmt: skip
    _harness(tmp_path, "report", "--db", "h.duckdb", "--out", "rep", "--format", "md,html,json")
    md = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    html = (tmp_path / "rep" / "report.html").read_text(encoding="utf-8")
    assert RAW.findall(md) == []
    assert RAW.findall(html) == []
    assert SHOWN in md
    assert SHOWN in html
    report = (tmp_path / "rep" / "report.json").read_text(encoding="utf-8")
    assert RAW.findall(report) == []  # JSON spells them as escapes
    json.loads(report)
