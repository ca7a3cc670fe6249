"""``harness cassettes lint`` and ``coverage`` on hand-edited cassettes (adversary round 12,
part B, issue 34). Each test fails on 6491dde, through the real CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main

KEY = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"
CLEAN = """interactions:
- request: {body: "x", method: POST, uri: "http://x"}
  response: {body: {string: "ok"}, status: {code: 200}}
"""


@pytest.mark.parametrize(
    "text",
    [
        f"# Authorization: Bearer {KEY}\n{CLEAN}",
        CLEAN.replace('uri: "http://x"', f'uri: "http://x", headers: {{"{KEY}": [a]}}'),
        f"{CLEAN}...\n# {KEY}\n",
        CLEAN.replace('body: "x"', f'body: "{KEY}"') + "interactions: []\n",
    ],
    ids=["a comment", "a mapping key", "after the document's end", "under a repeated key"],
)
def test_a_key_outside_the_loaded_values_is_found(tmp_path: Path, text: str) -> None:
    """Before: the lint walked the loaded cassette's values only, so a key in a comment, in a
    mapping key, after ``...``, or in an ``interactions:`` that a second one replaces (YAML
    keeps the last) was "clean", exit 0, though the committed file holds it."""
    folder = tmp_path / "c" / "srv" / "react"
    folder.mkdir(parents=True)
    (folder / "a.e0.yaml").write_text(text, encoding="utf-8")
    done = CliRunner().invoke(main, ["cassettes", "lint", str(tmp_path / "c")])
    assert done.exit_code == 1, done.output
    assert "outside the cassette's values" in done.output
    assert KEY not in done.output  # masked


def test_the_lint_of_a_clean_cassette_stays_clean(tmp_path: Path) -> None:
    folder = tmp_path / "c" / "srv" / "react"
    folder.mkdir(parents=True)
    (folder / "a.e0.yaml").write_text(CLEAN.replace('"x"', f'"{KEY[:8]}"'), encoding="utf-8")
    done = CliRunner().invoke(main, ["cassettes", "lint", str(tmp_path / "c")])
    assert done.exit_code == 0, done.output


@pytest.mark.parametrize(
    "text",
    [
        "interactions: 5\n",
        'interactions:\n- request: {body: \'{"messages": 5, "system": "' + "x" * 3000 + "\"}'}\n"
        "  response: {body: {string: '{\"usage\": [1]}'}}\n",
    ],
    ids=["interactions a number", "messages and usage of the wrong types"],
)
def test_coverage_of_cassettes_of_the_wrong_shape_is_no_traceback(
    tmp_path: Path, text: str
) -> None:
    """Before: ``TypeError: 'int' object is not iterable``, a traceback, exit 1."""
    folder = tmp_path / "c" / "srv" / "react"
    folder.mkdir(parents=True)
    (folder / "a.e0.yaml").write_text(text, encoding="utf-8")
    done = CliRunner().invoke(main, ["cassettes", "coverage", str(tmp_path / "c")])
    assert done.exception is None or isinstance(done.exception, SystemExit), repr(done.exception)
    assert done.exit_code == 0, done.output
    assert "nothing checked" in done.output
