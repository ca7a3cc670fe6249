"""Custom tools in suites (``tools_module`` and ``module:function``) and python graders found
beside the suite file, with no hand-set PYTHONPATH."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from harness.bench._session import BenchRequest, run_bench
from harness.cli import main
from harness.suites._load import load_suite
from harness.suites._suite import SuiteError

TOOLS = """\
import harness
from helper import SUFFIX  # a sibling module: the suite's folder is on sys.path

@harness.tool
def shout(text: str) -> str:
    \"\"\"Upper-case the text.\"\"\"
    return text.upper() + SUFFIX

def not_a_tool():
    return 1
"""

EXTRA = """\
def word_count(text: str) -> int:
    \"\"\"Count the words.\"\"\"
    return len(text.split())
"""

CHECKS = """\
def said_hello(result, workspace):
    outputs = [m.content for m in result.messages if m.role == "tool"]
    return (outputs == ["HELLO!", "3"], f"tool outputs: {outputs}")
"""

SUITE = """\
suite: custom
tools_module: mytools.py
defaults: {tools: [shout, "extra:word_count", finish]}
tasks:
  - id: use-both
    prompt: Shout hello and count words in 'a b c'.
    expect: {kind: python, function: "checks:said_hello"}
    mock:
      turns:
        - tool_calls:
            - {name: shout, arguments: {text: hello}}
            - {name: word_count, arguments: {text: a b c}}
        - text: "HELLO! and 3"
"""


@pytest.fixture
def suite_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "suites"
    folder.mkdir()
    (folder / "mytools.py").write_text(TOOLS)
    (folder / "helper.py").write_text('SUFFIX = "!"\n')
    (folder / "extra.py").write_text(EXTRA)
    (folder / "checks.py").write_text(CHECKS)
    (folder / "custom.yaml").write_text(SUITE)
    return folder


@pytest.mark.slow  # its python grader runs in a process of its own
def test_a_suite_runs_its_custom_tools_and_grader_from_its_folder(
    suite_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # neither the cwd nor PYTHONPATH holds the suite's folder
    monkeypatch.delenv("PYTHONPATH", raising=False)
    suite = load_suite(suite_dir / "custom.yaml")
    names = [getattr(t, "name", t) for t in suite.tasks[0].run_options()["tools"]]
    assert names == ["shout", "word_count", "finish"]
    db = tmp_path / "h.duckdb"
    report = run_bench(BenchRequest(suites=[str(suite_dir / "custom.yaml")], db=db, progress=False))
    assert report.exit_code == 0
    con = duckdb.connect(str(db), read_only=True)
    try:
        status, explanation = con.execute(
            "SELECT status, grader_explanation FROM results"
        ).fetchone()  # type: ignore[misc]
    finally:
        con.close()
    assert status == "passed", explanation


def _errors(folder: Path, text: str) -> str:
    path = folder / "custom.yaml"
    path.write_text(textwrap.dedent(text))
    with pytest.raises(SuiteError) as info:
        load_suite(path)
    return str(info.value)


def test_an_unknown_tool_names_the_file_task_field_and_the_known_tools(suite_dir: Path) -> None:
    text = _errors(
        suite_dir,
        """\
        suite: custom
        tools_module: mytools.py
        tasks:
          - id: t1
            prompt: P
            tools: [read_file, shuot]
            expect: {kind: contains, value: x}
        """,
    )
    path = suite_dir / "custom.yaml"
    assert f"{path}:6: task 't1': tools[1]: unknown tool 'shuot'" in text
    assert "mytools.py defines: shout" in text


@pytest.mark.parametrize(
    ("module", "content", "message"),
    [
        ("missing.py", None, "tools_module: 'missing.py' was not found beside the suite"),
        ("broken.py", "1 / 0\n", "tools_module: importing broken.py failed: ZeroDivisionError"),
        ("empty.py", "X = 1\n", "tools_module: empty.py defines no tools"),
        (
            "clash.py",
            "import harness\n@harness.tool\ndef read_file(path: str) -> str:\n    return ''\n",
            "tool 'read_file' has the name of a builtin tool; rename it",
        ),
    ],
)
def test_bad_tools_modules(suite_dir: Path, module: str, content: str | None, message: str) -> None:
    if content is not None:
        (suite_dir / module).write_text(content)
    text = _errors(
        suite_dir,
        f"""\
        suite: custom
        tools_module: {module}
        tasks:
          - id: t1
            prompt: P
            expect: {{kind: contains, value: x}}
        """,
    )
    assert f"{suite_dir / 'custom.yaml'}:2: tools_module:" in text
    assert message in text


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("nosuchmodule:fn", "cannot import 'nosuchmodule:fn': ModuleNotFoundError"),
        ("extra:nothing", "cannot import 'extra:nothing': module 'extra' has no 'nothing'"),
        ("extra:9bad", "'extra:9bad' must look like 'module:function'"),
    ],
)
def test_bad_module_function_refs(suite_dir: Path, ref: str, message: str) -> None:
    text = _errors(
        suite_dir,
        f"""\
        suite: custom
        tasks:
          - id: t1
            prompt: P
            tools: ["{ref}"]
            expect: {{kind: contains, value: x}}
        """,
    )
    assert f"{suite_dir / 'custom.yaml'}:5: task 't1': tools[0]: {message}" in text


def test_cli_validate_checks_custom_tools(suite_dir: Path) -> None:
    ok = CliRunner().invoke(main, ["suites", "validate", str(suite_dir / "custom.yaml")])
    assert ok.exit_code == 0, ok.output
    os.remove(suite_dir / "mytools.py")
    bad = CliRunner().invoke(main, ["suites", "validate", str(suite_dir / "custom.yaml")])
    assert bad.exit_code == 2
    assert "tools_module: 'mytools.py' was not found beside the suite" in bad.stderr


UNKNOWN_ADDED = """\
suite: added
tasks:
  - id: convo
    turns:
      - hello
      - {user: more, add_tools: [calculator, nosuchtool]}
    expect: {kind: contains, value: x}
    mock: {turns: [{text: x}, {text: x}]}
"""


def _refused(tmp_path: Path, path: Path, command: str) -> str:
    """``harness suites COMMAND path`` (or ``harness run path`` on the mock): exit 2, no
    traceback; what it said on stderr, on one line."""
    args = ["suites", command, str(path)]
    if command == "run":
        db, trace = str(tmp_path / "h.duckdb"), str(tmp_path / "t.jsonl")
        args = ["run", str(path), "--modes", "react", "--providers", "mock",
                "--db", db, "--trace-file", trace]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    return " ".join(result.stderr.split())


@pytest.mark.parametrize("command", ["validate", "audit", "run"])
def test_an_unknown_tool_in_add_tools_is_bad_input(tmp_path: Path, command: str) -> None:
    """A follow-up turn's ``add_tools`` naming no tool (adversary round 5: `suites validate`
    exit 0, `run` error cells and exit 3, `suites audit` a traceback): exit 2 naming the file,
    the task and the field, before anything runs."""
    path = tmp_path / "added.yaml"
    path.write_text(UNKNOWN_ADDED)
    said = _refused(tmp_path, path, command)
    assert "task 'convo': turns[1].add_tools[1]: unknown tool 'nosuchtool'" in said


ADDED_AGAIN = {
    "twice-in-one-turn": ("    tools: [calculator]\n", "[write_file, write_file]", 1, "write_file"),
    "already-in-tools": ("    tools: [calculator]\n", "[calculator]", 0, "calculator"),
    "already-in-all": ("", "[grep]", 0, "grep"),  # no tools: is every builtin
}


@pytest.mark.parametrize("command", ["validate", "audit", "run"])
@pytest.mark.parametrize("case", sorted(ADDED_AGAIN))
def test_a_tool_added_again_is_bad_input(tmp_path: Path, command: str, case: str) -> None:
    """A follow-up turn's ``add_tools`` naming a tool the run already has (adversary round 8:
    `suites validate` exit 0, `run` error cells ``tool 'grep' is already among the run's
    tools`` and exit 3, `suites audit` a traceback): exit 2 naming the turn and the tool."""
    tools, added, j, name = ADDED_AGAIN[case]
    path = tmp_path / "again.yaml"
    path.write_text(
        "suite: again\ntasks:\n  - id: convo\n" + tools
        + f"    turns:\n      - hello\n      - {{user: more, add_tools: {added}}}\n"
        "    expect: {kind: contains, value: x}\n    mock: {turns: [{text: x}, {text: x}]}\n"
    )  # fmt: skip
    said = _refused(tmp_path, path, command)
    assert f"turns[1].add_tools[{j}]: tool {name!r} is already among the task's tools" in said
