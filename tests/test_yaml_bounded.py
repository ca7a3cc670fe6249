"""harness._yaml.safe_load_bounded: alias bombs and deep nesting are refused at load time, naming
the file and the line; ordinary (and large, alias-free) documents load as yaml.safe_load does."""

from __future__ import annotations

import io
import pickle

import pytest
import yaml

from harness._yaml import MAX_ALIAS_NODES, MAX_DEPTH, check_yaml_bounds, safe_load_bounded
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
