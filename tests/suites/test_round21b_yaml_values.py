"""A fault found by adversary round 21, part B (issue 34): a YAML document without aliases was
bounded in depth only, so a 6 MB suite of one flow list of 3 million one-letter tags took 2.1 GB
and 190 s to validate (``suites validate``, ``harness run``); the 64 MiB a suite file may
have holds ten times that. A document of more than ``MAX_NODES`` values is refused now, at its
line, before the loader builds anything. Fails on 84cec7a."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from harness._yaml import check_yaml_bounds
from harness.cli import main
from harness.errors import YAMLSyntaxError


def test_a_document_of_too_many_values_is_refused_as_it_is_read() -> None:
    with pytest.raises(YAMLSyntaxError, match="more than 1,000,000 values"):
        check_yaml_bounds("[" + "a," * 1_000_001 + "]", source="s.yaml")


def test_suites_validate_refuses_it_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    tags = ",".join(["a"] * 1_000_001)
    path.write_text(f"suite: s\ntasks:\n  - id: a\n    prompt: p\n    tags: [{tags}]\n"
                    "    expect: {kind: contains, value: x}\n")  # fmt: skip
    done = CliRunner().invoke(main, ["suites", "validate", str(path)])
    assert done.exit_code == 2, done.output
    assert "more than 1,000,000 values" in done.output


def test_a_large_ordinary_document_is_taken() -> None:
    tasks = "".join(f"- {{id: t{i}, prompt: p, expect: {{kind: contains, value: x}}}}\n"
                    for i in range(30_000))  # fmt: skip
    check_yaml_bounds(tasks, source="s.yaml")
