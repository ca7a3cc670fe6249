"""Suite files: validation errors name the file, line, task and field; defaults merge; loading."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main
from harness.errors import ConfigError
from harness.grading._text import ContainsGrader, EqualsGrader
from harness.suites._load import load_suite, load_suites, suite_files
from harness.suites._suite import MAX_ERRORS, RUN_OPTION_KEYS, SuiteError

GOOD = """\
suite: demo
description: A tiny suite.
defaults: {tools: [calculator], max_iterations: 8, temperature: 0.7}
tasks:
  - id: mul-add
    prompt: "What is 17*23+4?"
    expect: {kind: contains, value: "395"}
    mock: {turns: [{text: "395"}]}
  - id: second
    prompt: "Another"
    expect: {kind: equals, value: ["a", "b"]}
"""


def write(tmp_path: Path, text: str, name: str = "suite.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def errors_of(path: Path) -> str:
    with pytest.raises(SuiteError) as info:
        load_suite(path)
    assert isinstance(info.value, ConfigError)
    return str(info.value)


def one_task(expect: str, extra: str = "", prompt: str = '"Q"') -> str:
    return (
        "suite: demo\ntasks:\n  - id: t1\n    prompt: P\n    expect: {kind: equals, value: x}\n"
        f"  - id: the-task\n    prompt: {prompt}\n    expect: {expect}\n{extra}"
    )


def test_good_suite_loads_and_merges_defaults(tmp_path: Path) -> None:
    suite = load_suite(write(tmp_path, GOOD))
    assert suite.name == "demo"
    assert suite.source == tmp_path / "suite.yaml"
    assert [t.id for t in suite.tasks] == ["mul-add", "second"]
    first = suite.task("mul-add")
    assert first.run_options() == {"tools": ["calculator"], "max_iterations": 8, "temperature": 0.7}
    assert first.mock_provider_opts() == {"turns": [{"text": "395"}], "when_exhausted": "error"}
    assert suite.task("second").mock_provider_opts() is None
    second = suite.task("second").expect
    assert isinstance(second, EqualsGrader)
    assert second.value == ["a", "b"]
    assert set(first.run_options()) <= set(RUN_OPTION_KEYS)


def test_task_values_win_over_defaults_and_null_tools_means_none(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        suite: demo
        defaults: {tools: [calculator, finish], max_iterations: 8, until_tool: finish}
        tasks:
          - id: a
            prompt: P
            expect: {kind: contains, value: 395}
            max_iterations: 3
            tools: null
            until_tool: null
            workspace: {files: {notes.txt: hello, sub/x.md: "# x"}}
          - id: b
            prompt: P
            expect: {kind: contains, value: x}
        """,
    )
    suite = load_suite(path)
    a, b = suite.tasks
    assert a.run_options() == {
        "tools": None,
        "max_iterations": 3,
        "until_tool": None,
        "workspace_files": {"notes.txt": "hello", "sub/x.md": "# x"},
    }
    assert isinstance(a.expect, ContainsGrader)
    assert a.expect.value == ["395"]  # a YAML number is read as its text
    assert b.run_options() == {
        "tools": ["calculator", "finish"],
        "max_iterations": 8,
        "until_tool": ["finish"],
    }


def test_mock_provider_opts_are_fresh_copies(tmp_path: Path) -> None:
    task = load_suite(write(tmp_path, GOOD)).tasks[0]
    opts = task.mock_provider_opts()
    assert opts is not None
    opts["turns"][0]["text"] = "changed"
    assert task.mock_provider_opts() == {"turns": [{"text": "395"}], "when_exhausted": "error"}


def test_malformed_yaml_names_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, "suite: demo\ntasks:\n  - id: a\n    prompt: [unclosed\n")
    message = errors_of(path)
    assert message.startswith(f"{path}:5:1: invalid YAML")
    bad_indent = write(tmp_path, "suite: demo\n tasks: []\n", "indent.yaml")
    assert errors_of(bad_indent).startswith(f"{bad_indent}:2:")


def test_duplicate_task_id(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        suite: demo
        tasks:
          - id: same
            prompt: P
            expect: {kind: contains, value: x}
          - id: other
            prompt: P
            expect: {kind: contains, value: x}
          - id: same
            prompt: P
            expect: {kind: contains, value: x}
        """,
    )
    assert errors_of(path) == (
        f"{path}:9: task 'same': id: duplicate task id 'same' (task 1 has it too); "
        "ids must be unique in a suite"
    )


def test_unknown_grader_kind(tmp_path: Path) -> None:
    path = write(tmp_path, one_task("{kind: contians, value: x}"))
    message = errors_of(path)
    assert message.startswith(
        f"{path}:8: task 'the-task': expect.kind: unknown grader kind 'contians'; "
        "did you mean 'contains'?"
    )
    assert "harness.graders" in message  # where a plug-in kind would come from


def test_unknown_keys_are_rejected_with_a_suggestion(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        suite: demo
        descripton: typo
        defaults: {max_iteration: 3}
        tasks:
          - id: a
            prompt: P
            expect: {kind: contains, value: x, extra: 1}
            promt: again
            mock: {turns: [{text: hi}], when_exhausted: repeat_last, loop: true}
        """,
    )
    lines = errors_of(path).splitlines()
    assert lines[0].startswith(f"{path}:2: descripton: unknown key 'descripton'; did you mean")
    assert lines[1].startswith(f"{path}:3: defaults.max_iteration: unknown key 'max_iteration'; ")
    assert "did you mean 'max_iterations'?" in lines[1]
    assert lines[2].startswith(f"{path}:7: task 'a': expect.extra: unknown key 'extra'")
    assert lines[3].startswith(f"{path}:8: task 'a': promt: unknown key 'promt'; did you mean")
    assert lines[4].startswith(f"{path}:9: task 'a': mock.loop: unknown key 'loop'")
    assert len(lines) == 5


def test_missing_fields(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        suite: demo
        tasks:
          - id: no-prompt
            expect: {kind: contains, value: x}
          - prompt: no id
            expect: {kind: contains}
        """,
    )
    assert errors_of(path).splitlines() == [
        f"{path}:3: task 'no-prompt': prompt: missing required field; add `prompt:` here",
        f"{path}:5: task #2: id: missing required field; add `id:` here",
        f"{path}:6: task #2: expect.value: contains needs `value`: the accepted string "
        "(or a list of them)",
    ]
    no_tasks = write(tmp_path, "suite: demo\n", "empty-tasks.yaml")
    assert errors_of(no_tasks) == (
        f"{no_tasks}:1: tasks: missing required field; add `tasks:` here"
    )


def test_bad_regex_and_bad_schema(tmp_path: Path) -> None:
    regex = write(tmp_path, one_task("{kind: regex, value: ['ok', '(unclosed']}"), "r.yaml")
    assert errors_of(regex) == (
        f"{regex}:8: task 'the-task': expect.value[1]: invalid regular expression '(unclosed': "
        "missing ), unterminated subpattern at position 0"
    )
    schema = write(
        tmp_path,
        one_task("\n      kind: json_schema\n      schema:\n        type: objekt\n"),
        "s.yaml",
    )
    message = errors_of(schema)
    assert message.startswith(
        f"{schema}:10: task 'the-task': expect.schema: not a valid JSON Schema at type:"
    )


@pytest.mark.parametrize(
    ("expect", "field", "fragment"),
    [
        ("{kind: file_contains, value: x}", "expect.path", "file_contains needs `path`"),
        ("{kind: file_contains, path: /etc/passwd, value: x}", "expect.path", "relative path"),
        ("{kind: file_contains, path: ../up.txt, value: x}", "expect.path", "relative path"),
        ("{kind: json_schema}", "expect.schema", "json_schema needs `schema`"),
        ("{kind: python, function: no_colon}", "expect.function", "'package.module:name'"),
        ("{kind: python}", "expect.function", "python needs `function`"),
        ("{kind: finish_reason, value: done}", "expect.value", "unknown finish reason 'done'"),
        ("{kind: contains, value: x, schema: {}}", "expect.schema", "not used by contains"),
        ("{kind: finish_reason, value: stop, target: text}", "expect.target", "not used by"),
        ("{kind: contains, value: ''}", "expect.value", "empty string matches everything"),
        ("{kind: equals, value: []}", "expect.value", "at least one accepted string"),
        ("{kind: equals, value: x, target: final}", "expect.target", "input should be"),
    ],
)
def test_grader_fields_are_checked_per_kind(
    tmp_path: Path, expect: str, field: str, fragment: str
) -> None:
    message = errors_of(write(tmp_path, one_task(expect)))
    assert f":8: task 'the-task': {field}: " in message
    assert fragment in message
    assert len(message.splitlines()) == 1


@pytest.mark.parametrize(
    ("extra", "field", "fragment"),
    [
        ("    tools: [calculater]\n", "tools[0]", "did you mean 'calculator'?"),
        ("    max_iterations: 0\n", "max_iterations", "greater than or equal to 1"),
        ("    max_iterations: '8'\n", "max_iterations", "valid integer"),
        ("    temperature: 3\n", "temperature", "less than or equal to 2"),
        ("    phase: planning\n", "phase", "unknown phase 'planning'"),
        ("    max_iterations: null\n", "max_iterations", "must not be null"),
        ("    mock: {turns: [{text: a}, {txt: b}]}\n", "mock.turns[1]", "unknown keys ['txt']"),
        ("    mock: {turns: []}\n", "mock.turns", "at least 1 item"),
        ("    workspace: {files: {../x: y}}\n", "workspace.files['../x']", "relative path"),
        ("    tools: [calculator]\n    until_tool: finish\n", "until_tool", "not among"),
    ],
)
def test_run_options_and_task_parts_are_checked(
    tmp_path: Path, extra: str, field: str, fragment: str
) -> None:
    message = errors_of(write(tmp_path, one_task("{kind: equals, value: x}", extra)))
    assert f"task 'the-task': {field}: " in message
    assert fragment in message


def test_bad_task_id_and_suite_name(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "suite: Demo Suite\ntasks:\n  - id: -bad id\n    prompt: P\n"
        "    expect: {kind: contains, value: x}\n",
    )
    lines = errors_of(path).splitlines()
    assert lines[0].startswith(f"{path}:1: suite: suite names are lower case")
    assert lines[1].startswith(f"{path}:3: task '-bad id': id: task ids start with a letter")


def test_duplicate_yaml_keys_are_reported(tmp_path: Path) -> None:
    path = write(
        tmp_path, GOOD.replace('    prompt: "Another"\n', "    prompt: A\n    prompt: B\n")
    )
    assert errors_of(path) == (
        f"{path}:11: duplicate key 'prompt' (first on line 10); keep only one"
    )


def test_not_a_mapping_and_empty_file(tmp_path: Path) -> None:
    listing = write(tmp_path, "- a\n- b\n", "list.yaml")
    assert "must be a mapping with `suite:` and `tasks:`" in errors_of(listing)
    empty = write(tmp_path, "", "empty.yaml")
    assert errors_of(empty).startswith(f"{empty}: a suite file must be a mapping")


def test_all_errors_are_reported_up_to_the_cap(tmp_path: Path) -> None:
    tasks = "".join(
        f"  - id: t{i}\n    prompt: P\n    expect: {{kind: nope, value: x}}\n" for i in range(25)
    )
    path = write(tmp_path, f"suite: demo\ntasks:\n{tasks}")
    with pytest.raises(SuiteError) as info:
        load_suite(path)
    assert len(info.value.issues) == 25
    lines = str(info.value).splitlines()
    assert len(lines) == MAX_ERRORS + 1
    assert lines[0].startswith(f"{path}:5: task 't0': expect.kind:")
    assert lines[-1] == "... and 5 more errors"


def test_load_suites_from_a_directory(tmp_path: Path) -> None:
    write(tmp_path, GOOD.replace("suite: demo", "suite: beta"), "b.yml")
    write(tmp_path, GOOD.replace("suite: demo", "suite: alpha"), "a.yaml")
    (tmp_path / "notes.txt").write_text("not a suite")
    suites = load_suites([tmp_path])
    assert [s.name for s in suites] == ["alpha", "beta"]
    # the same file named twice loads once
    assert [s.name for s in load_suites([tmp_path / "a.yaml", tmp_path])] == ["alpha", "beta"]
    assert suite_files([tmp_path]) == [tmp_path / "a.yaml", tmp_path / "b.yml"]


def test_load_suites_reports_every_problem(tmp_path: Path) -> None:
    write(tmp_path, GOOD, "one.yaml")
    write(tmp_path, GOOD, "two.yaml")
    write(tmp_path, "suite: [", "three.yaml")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SuiteError) as info:
        load_suites([tmp_path, empty, tmp_path / "missing.yaml"])
    issues = info.value.issues
    assert any(i.startswith(f"{empty}: no *.yaml") for i in issues)
    assert any(i.startswith(f"{tmp_path / 'missing.yaml'}: no such file") for i in issues)
    assert any(i.startswith(f"{tmp_path / 'three.yaml'}:1:") for i in issues)
    assert f"{tmp_path / 'two.yaml'}: suite name 'demo' is also used by" in str(info.value)


def test_cli_validate_ok(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD)
    result = CliRunner().invoke(main, ["suites", "validate", str(path)])
    assert result.exit_code == 0, result.output
    assert result.output == f"OK demo: 2 tasks ({path})\n"


def test_cli_validate_errors_exit_2(tmp_path: Path) -> None:
    good = write(tmp_path, GOOD, "good.yaml")
    bad = write(tmp_path, one_task("{kind: unknown, value: x}"), "bad.yaml")
    result = CliRunner().invoke(main, ["suites", "validate", str(good), str(bad)])
    assert result.exit_code == 2
    assert f"OK demo: 2 tasks ({good})" in result.stdout
    assert f"{bad}:8: task 'the-task': expect.kind:" in result.stderr


def test_cli_validate_needs_a_path() -> None:
    result = CliRunner().invoke(main, ["suites", "validate"])
    assert result.exit_code == 2
    assert "Missing argument" in result.output
