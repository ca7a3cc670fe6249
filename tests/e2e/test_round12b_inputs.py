"""Faults found by adversary round 12, part B (issue 34), in the files and options the CLI
reads: YAML and TOML values the parsers cannot make, merge keys taken for repeats, and
workspace files that cannot all be made. Each test fails on 6491dde, through the real CLI
(click's runner in this process)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main

TASK = """suite: s
tasks:
  - id: t1
    prompt: hi
    expect: {kind: contains, value: ok}
    mock: {turns: [{text: ok}]}
"""


def _clean(result: object, code: int) -> str:
    """The output of a CLI call that ended with ``code`` and no traceback."""
    output = str(getattr(result, "output", ""))
    exc = getattr(result, "exception", None)
    assert exc is None or isinstance(exc, SystemExit), repr(exc)
    assert getattr(result, "exit_code", None) == code, output
    assert "Traceback" not in output
    return output


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("    expect: {kind: number, value: " + "9" * 5000 + "}", "more than 4,300 digits"),
        ("  - id: 2001-13-45", "cannot be made (month must be in 1..12)"),
    ],
    ids=["5,000 digits", "no such date"],
)
def test_a_yaml_value_python_cannot_make_is_a_yaml_error(
    tmp_path: Path, line: str, said: str
) -> None:
    """Before: PyYAML's constructor raised a bare ``ValueError`` (``Exceeds the limit (4300
    digits)``, ``month must be in 1..12``): a traceback, exit 1, from ``validate`` and ``run``."""
    text = TASK.replace("    expect: {kind: contains, value: ok}" if "expect" in line
                        else "  - id: t1", line)  # fmt: skip
    suite = tmp_path / "s.yaml"
    suite.write_text(text, encoding="utf-8")
    for args in (["suites", "validate", str(suite)],
                 ["run", str(suite), "--providers", "mock", "--modes", "react", "--db",
                  str(tmp_path / "h.duckdb"), "--no-progress"]):  # fmt: skip
        assert said in _clean(CliRunner().invoke(main, args), 2)


def test_a_merge_key_override_is_not_a_repeated_key(tmp_path: Path) -> None:
    """Before: ``expect: {<<: *base, value: 3}`` (YAML's own way to override a merged key) was
    refused as ``duplicate key 'value' (first on line 3)``: the check ran on the node tree
    after merging had copied the merged keys into it."""
    suite = tmp_path / "s.yaml"
    suite.write_text(
        TASK.replace("    expect: {kind: contains, value: ok}",
                     "    expect: {<<: {kind: contains, value: no}, value: ok}"),
        encoding="utf-8",
    )  # fmt: skip
    assert "OK s: 1 task" in _clean(CliRunner().invoke(main, ["suites", "validate", str(suite)]), 0)
    suite.write_text(TASK.replace("prompt: hi", "prompt: hi\n    prompt: ho"), encoding="utf-8")
    said = _clean(CliRunner().invoke(main, ["suites", "validate", str(suite)]), 2)
    assert "duplicate key 'prompt' (first on line 4)" in said  # a real repeat still is one


@pytest.mark.parametrize(
    ("files", "said"),
    [
        ('a: "x"\n        a/b: "y"', "'a/b' needs 'a' to be a folder, but it is a file here too"),
        ('"a/./b": "x"\n        a/b: "y"', "'a/b' names the same file as 'a/./b'"),
        ('"a\\ud800": "x"', "holds a lone surrogate at character 1, not text"),
    ],
    ids=["a file and a folder", "one file twice", "a lone surrogate"],
)
def test_workspace_files_that_cannot_all_be_made_are_refused_by_validate(
    tmp_path: Path, files: str, said: str
) -> None:
    """Before: ``suites validate`` said OK, and ``run`` made an error cell (``Not a directory``;
    ``UnicodeEncodeError``), exit 3; two names of one file kept the last content silently."""
    suite = tmp_path / "s.yaml"
    suite.write_text(
        TASK.replace("    mock:", f"    workspace:\n      files:\n        {files}\n    mock:"),
        encoding="utf-8",
    )
    assert said in _clean(CliRunner().invoke(main, ["suites", "validate", str(suite)]), 2)


DEEP = "[" * 3000 + "]" * 3000


@pytest.mark.parametrize("value", [DEEP, "{a=" * 600 + "1" + "}" * 600, "9" * 5000],
                         ids=["deep arrays", "deep tables", "5,000 digits"])  # fmt: skip
def test_toml_the_parser_cannot_read_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """Before: ``tomllib`` raised ``RecursionError`` (nesting) or ``ValueError`` (digits), not
    ``TOMLDecodeError``: a traceback, exit 1, from ``harness.toml``, from the ``pyproject.toml``
    the gate reads and from ``--provider-opt``."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HARNESS_PROVIDER_OPTS", "")  # --provider-opt sets it in this process
    suite = tmp_path / "s.yaml"
    suite.write_text(TASK, encoding="utf-8")
    db = str(tmp_path / "h.duckdb")
    run = ["run", str(suite), "--modes", "react", "--db", db, "--no-progress"]
    (tmp_path / "harness.toml").write_text(
        f'[providers.x]\nkind = "openai"\nmodel = "m"\nextra_body = {{v = {value}}}\n',
        encoding="utf-8",
    )
    said = _clean(CliRunner().invoke(main, [*run, "--providers", "x"]), 2)
    assert "harness.toml: not valid TOML" in said
    (tmp_path / "harness.toml").unlink()
    opt = _clean(CliRunner().invoke(main, [*run, "--providers", "mock", "--provider-opt",
                                           f"openai.max_tokens={value}"]), 2)  # fmt: skip
    assert "--provider-opt" in opt
    assert _clean(CliRunner().invoke(main, [*run, "--providers", "mock"]), 0)
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(f"[tool.harness.gate]\nmax-cost-increase = {value}\n", encoding="utf-8")
    saved = CliRunner().invoke(main, ["baseline", "save", "--db", db, "-o",
                                      str(tmp_path / "b.json")])  # fmt: skip
    _clean(saved, 0)
    gate = CliRunner().invoke(main, ["gate", "--db", db, "--baseline", str(tmp_path / "b.json"),
                                     "--pyproject", str(pyproject)])  # fmt: skip
    assert "cannot read gate thresholds" in _clean(gate, 2)


@pytest.mark.parametrize(
    ("example", "said"),
    [
        ('{role: user, content: "a", content: "b"}', "key 'content' given twice"),
        ("{role: user, content: " + "9" * 5000 + "}", "more than 4,300 digits"),
    ],
    ids=["a repeated key", "5,000 digits"],
)
def test_a_profiles_examples_file_is_read_as_strictly_as_a_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, example: str, said: str
) -> None:
    """Before: a key given twice in a profile's ``examples_file`` kept the last silently (the
    examples are sent to the model; a suite refuses the same repeat); 5,000 digits were a
    ``ValueError`` traceback, exit 1."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ex.yaml").write_text(f"- messages:\n    - {example}\n", encoding="utf-8")
    (tmp_path / "harness.toml").write_text(
        '[providers.x]\nkind = "openai"\nmodel = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'examples_file = "ex.yaml"\n',
        encoding="utf-8",
    )
    suite = tmp_path / "s.yaml"
    suite.write_text(TASK, encoding="utf-8")
    run = ["run", str(suite), "--providers", "x", "--modes", "react", "--no-progress"]
    done = CliRunner().invoke(main, [*run, "--db", str(tmp_path / "h.duckdb")])
    assert said in _clean(done, 2)
