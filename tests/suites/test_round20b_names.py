"""Faults found by adversary round 20, part B (issue 34): names no file or command line can have,
written as YAML or TOML escapes. A suite's ``tools_module: "a\\0b.py"`` (a NUL), ``"\\ud800.py"``
(a lone surrogate) or a name past 255 bytes, and a profile's ``examples_file = "a\\u0000b"`` (in
``harness.toml`` or ``--provider-opt``) ended ``suites validate`` / ``harness run`` in a
``ValueError`` or ``OSError`` traceback, exit 1; a ``command`` grader's command holding a NUL
passed ``suites validate`` and made every cell an error cell (``ValueError: embedded null
byte``). Each fails on 218441d."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main

_TASKS = """tasks:
  - id: a
    prompt: hi
    workspace: {files: {"f": "x"}}
    expect: EXPECT
    mock: {turns: [{text: x}]}
"""
_CONTAINS = "{kind: contains, value: x}"


def _said(args: list[str], code: int) -> str:
    result = CliRunner().invoke(main, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    return result.output


@pytest.mark.parametrize(
    ("module", "said"),
    [('"a\\0b.py"', "embedded null byte"), ('"\\ud800.py"', "surrogate"),
     (f'"{"a" * 300}.py"', "File name too long")],
)  # fmt: skip
def test_a_tools_module_no_file_can_be_named_is_refused(
    tmp_path: Path, module: str, said: str
) -> None:
    suite = tmp_path / "s.yaml"
    suite.write_text(f"suite: s\ntools_module: {module}\n" + _TASKS.replace("EXPECT", _CONTAINS))
    out = _said(["suites", "validate", str(suite)], 2)
    assert "tools_module" in out
    assert said in out


@pytest.mark.parametrize("command", ['"echo \\0 hi"', '"echo \\ud800"'])
def test_a_command_no_command_line_can_hold_is_refused_at_validate(
    tmp_path: Path, command: str
) -> None:
    suite = tmp_path / "s.yaml"
    expect = f"{{kind: command, command: {command}}}"
    suite.write_text("suite: s\n" + _TASKS.replace("EXPECT", expect))
    assert "no command line can hold" in _said(["suites", "validate", str(suite)], 2)


def test_an_examples_file_no_file_can_be_named_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = tmp_path / "s.yaml"
    suite.write_text("suite: s\n" + _TASKS.replace("EXPECT", _CONTAINS))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HARNESS_PROVIDER_OPTS", "")  # --provider-opt sets it in this process
    run = ["run", str(suite), "--modes", "react", "--db", str(tmp_path / "h.duckdb")]
    opt = 'openai.examples_file="a\\u0000b"'
    assert "embedded null byte" in _said(
        [*run, "--providers", "openai:m", "--provider-opt", opt], 2
    )
    (tmp_path / "harness.toml").write_text(
        '[providers.p]\nkind = "openai"\nbase_url = "http://127.0.0.1:18599/v1"\nmodel = "m"\n'
        'examples_file = "a\\u0000b"\n'
    )
    out = _said([*run, "--providers", "p"], 2)
    assert "examples_file" in out
    assert "embedded null byte" in out
