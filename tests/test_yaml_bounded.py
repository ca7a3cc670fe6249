"""harness._yaml.safe_load_bounded: alias bombs and deep nesting are refused at load time, naming
the file and the line; ordinary (and large, alias-free) documents load as yaml.safe_load does."""

from __future__ import annotations

import io
import pickle
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from harness._yaml import MAX_ALIAS_NODES, MAX_DEPTH, check_yaml_bounds, safe_load_bounded
from harness.cli import main
from harness.errors import ConfigError, YAMLSyntaxError

LAUGHS = """\
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""


def test_ordinary_documents_load_like_safe_load() -> None:
    text = "suite: s\ndefaults: &d {tools: [calculator]}\ntasks:\n  - {id: t, <<: *d}\n"
    assert safe_load_bounded(text, source="s.yaml") == yaml.safe_load(text)
    assert safe_load_bounded(text.encode(), source="s.yaml") == yaml.safe_load(text)
    assert safe_load_bounded(io.StringIO(text), source="s.yaml") == yaml.safe_load(text)
    assert safe_load_bounded("", source="empty.yaml") is None


def test_a_large_document_without_aliases_loads() -> None:
    tasks = "".join(f"  - id: t{i}\n    prompt: 'p {i}'\n    tags: [a, b]\n" for i in range(20_000))
    data = safe_load_bounded("tasks:\n" + tasks, source="big.yaml")
    assert len(data["tasks"]) == 20_000


def test_the_billion_laughs_is_refused_naming_file_and_line() -> None:
    assert len(LAUGHS) < 800
    with pytest.raises(YAMLSyntaxError) as got:
        safe_load_bounded(LAUGHS, source="suites/bomb.yaml")
    exc = got.value
    assert isinstance(exc, ConfigError)  # exit 2 in the CLI, like every bad input
    assert str(exc).startswith(f"suites/bomb.yaml:{exc.line}: aliases expand to more than")
    assert exc.line in (4, 5)  # where the expansion passes the bound
    assert pickle.loads(pickle.dumps(exc)).line == exc.line


def test_aliases_up_to_the_bound_are_fine() -> None:
    text = "a: &a [1, 2, 3, 4]\nb: [" + ", ".join(["*a"] * (MAX_ALIAS_NODES // 5)) + "]\n"
    assert len(safe_load_bounded(text, source="ok.yaml")["b"]) == MAX_ALIAS_NODES // 5
    with pytest.raises(YAMLSyntaxError, match="aliases expand"):
        check_yaml_bounds(text, source="ok.yaml", max_alias_nodes=100)


@pytest.mark.parametrize(
    "text",
    [
        "[" * 500 + "]" * 500,
        "".join(f"{'  ' * i}k{i}:\n" for i in range(500)) + "  " * 500 + "v\n",
    ],
    ids=["flow", "block"],
)
def test_deep_nesting_is_refused_naming_file_and_line(text: str) -> None:
    with pytest.raises(YAMLSyntaxError) as got:
        safe_load_bounded(text, source="deep.yaml")
    assert f"nested more than {MAX_DEPTH} levels deep" in str(got.value)
    assert str(got.value).startswith(f"deep.yaml:{got.value.line}:")
    assert got.value.line is not None


def test_nesting_at_the_bound_loads() -> None:
    text = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert safe_load_bounded(text, source="d.yaml") is not None


def test_malformed_yaml_names_file_and_line() -> None:
    with pytest.raises(YAMLSyntaxError, match=r"^bad\.yaml:2: ") as got:
        safe_load_bounded("a: 1\n\tb: 2\n", source="bad.yaml")
    assert got.value.line == 2
    with pytest.raises(YAMLSyntaxError, match=r"^bin\.yaml: not UTF-8"):
        safe_load_bounded(b"a: \xff\n", source="bin.yaml")
    with pytest.raises(YAMLSyntaxError, match="python/object"):
        safe_load_bounded("!!python/object:os.system {}\n", source="evil.yaml")


@pytest.mark.parametrize(
    ("text", "line", "anchor"),
    [
        ('arguments: &a {expression: "1+1", more: *a}\n', 1, "a"),
        ("expect: &e {kind: all, graders: [*e]}\n", 1, "e"),
        ("tasks:\n  - &t\n    id: a\n    tags: *t\n", 4, "t"),
        ("defaults: &d\n  <<: *d\n", 2, "d"),
        ("a: &a [1, [2, [3, *a]]]\n", 1, "a"),
    ],
    ids=["flow-map", "flow-seq", "block", "merge-key", "nested"],
)
def test_a_recursive_alias_is_refused_naming_file_and_line(
    text: str, line: int, anchor: str
) -> None:
    with pytest.raises(YAMLSyntaxError) as got:
        safe_load_bounded(text, source="suites/rec.yaml")
    assert isinstance(got.value, ConfigError)
    assert got.value.line == line
    assert str(got.value).startswith(f"suites/rec.yaml:{line}: recursive alias *{anchor}")


def test_an_alias_after_its_anchor_closed_is_fine() -> None:
    text = "a: &a {x: 1}\nb: {inner: *a, again: [*a, *a]}\nc: &c [*a]\nd: *c\n"
    assert safe_load_bounded(text, source="ok.yaml") == yaml.safe_load(text)


def test_a_recursive_alias_in_a_profile_examples_file_is_bad_input(tmp_path: Path) -> None:
    from harness.providers._profiles import _read_examples

    path = tmp_path / "examples.yaml"
    path.write_text("- &x {prompt: p, answer: [*x]}\n")
    with pytest.raises(ConfigError, match=rf"{re.escape(str(path))}:1: recursive alias \*x"):
        _read_examples(path, "providers.p")


REC_SUITE = """\
suite: rec
tasks:
  - id: a
    prompt: p
    tools: [calculator]
    expect: {kind: contains, value: x}
    mock: {turns: [{tool_calls: [{name: calculator, arguments: &a {expression: "1+1", more: *a}}]}]}
"""

REC_CASSETTE = """\
interactions:
- request:
    body: '{}'
    headers: &h
      content-type: [application/json]
      x-echo: *h
    method: POST
    uri: https://api.example.com/v1/chat
  response:
    body: {string: '{}'}
    headers: {}
    status: {code: 200, message: OK}
version: 1
"""


@pytest.mark.parametrize("command", ["validate", "run"])
def test_cli_refuses_a_suite_with_a_recursive_alias(tmp_path: Path, command: str) -> None:
    path = tmp_path / "rec.yaml"
    path.write_text(REC_SUITE)
    args = ["suites", "validate", str(path)]
    if command == "run":
        db, trace = str(tmp_path / "h.duckdb"), str(tmp_path / "t.jsonl")
        args = ["run", str(path), "--modes", "react", "--providers", "mock", "--db", db,
                "--trace-file", trace]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert f"{path}:7:" in result.stderr
    assert "recursive alias *a" in result.stderr


def test_cassettes_lint_reports_a_recursive_alias_as_corrupt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # not the checkout's reports/traces, linted when present
    path = tmp_path / "cas" / "rec.yaml"
    path.parent.mkdir()
    path.write_text(REC_CASSETTE)
    result = CliRunner().invoke(main, ["cassettes", "lint", str(tmp_path / "cas")])
    assert result.exit_code == 2, result.output
    assert f"{path}:6: recursive alias *h" in result.output + result.stderr


def _big_alias_suite(times: int) -> str:
    """One 1 MB anchored scalar aliased ``times`` times in a task's ``workspace.files``
    (adversary round 5: 300 aliases wrote 606 MB for two cells)."""
    files = "\n".join(f"        f{i}.txt: *big" for i in range(times))
    return (
        "suite: bomb\ntasks:\n  - id: t\n    prompt: hi\n    expect: {kind: contains, value: x}\n"
        f"    workspace:\n      files:\n        seed.txt: &big {'x' * 1_000_000}\n{files}\n"
    )


def test_aliases_are_bounded_by_the_bytes_they_expand_to(tmp_path: Path) -> None:
    text = _big_alias_suite(300)
    with pytest.raises(YAMLSyntaxError, match=r"bomb\.yaml:\d+: aliases expand to more than"):
        safe_load_bounded(text, source="bomb.yaml")
    # a few copies of a large text stay fine (11 MB in all, 10 through aliases)
    assert (
        len(
            safe_load_bounded(_big_alias_suite(10), source="ok.yaml")["tasks"][0]["workspace"][
                "files"
            ]
        )
        == 11
    )
    path = tmp_path / "bomb.yaml"
    path.write_text(text)
    result = CliRunner().invoke(main, ["suites", "validate", str(path)])
    assert result.exit_code == 2, result.output
    assert "bytes of text" in result.stderr
