"""`harness suites audit`: tasks that a do-nothing or empty-arguments model passes are listed and
fail the audit, unless the task allows it with a reason; the built-in suites pass it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import harness
from harness.grading import grade, parse_grader
from harness.providers._mock import MockProvider
from harness.suites._audit import audit_suites
from harness.suites._load import load_suites

ROOT = Path(__file__).resolve().parents[2]

LENIENT = """\
suite: lenient
tasks:
  - id: accepts-any-stop
    prompt: "Find the key."
    tools: [kv_get]
    expect: {kind: finish_reason, value: [stop]}
  - id: file-already-there
    prompt: "Write hello into a.txt."
    tools: [write_file]
    workspace: {files: {a.txt: "hello"}}
    expect: {kind: file_contains, path: a.txt, value: hello}
  - id: excused
    prompt: "Decline politely."
    expect: {kind: contains, value: "know"}
    audit: {allow: true, reason: "a task about declining"}
  - id: strict
    prompt: "What is 6*7?"
    tools: [calculator]
    expect:
      kind: all
      graders:
        - {kind: tool_calls, value: [calculator]}
        - {kind: contains, value: "42"}
"""


def write(tmp_path: Path) -> Path:
    path = tmp_path / "lenient.yaml"
    path.write_text(LENIENT, encoding="utf-8")
    return path


def test_audit_lists_tasks_that_pass_without_work(tmp_path: Path) -> None:
    report = audit_suites(load_suites([str(write(tmp_path))]))
    assert report.tasks == 4
    found = {(f.task_id, f.adversary) for f in report.findings}
    assert ("accepts-any-stop", "do-nothing") in found
    assert ("file-already-there", "empty-args") in found
    assert all(f.task_id != "strict" for f in report.findings)
    assert {f.task_id for f in report.failing} == {"accepts-any-stop", "file-already-there"}
    excused = [f for f in report.findings if f.task_id == "excused"]
    assert excused
    assert all(f.allowed for f in excused)
    assert excused[0].reason == "a task about declining"
    assert report.exit_code == 1


@pytest.mark.slow
@pytest.mark.timeout(1800)  # three CLI subprocesses; the built-in audit runs ~1500 short runs
def test_cli_audit_exit_codes(tmp_path: Path) -> None:
    bad = subprocess.run(
        [sys.executable, "-m", "harness.cli", "suites", "audit", str(write(tmp_path))],
        capture_output=True, text=True, cwd=ROOT, check=False, timeout=120,
    )  # fmt: skip
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "accepts-any-stop" in bad.stdout
    assert "do-nothing: passes" in bad.stdout
    builtin = subprocess.run(
        [sys.executable, "-m", "harness.cli", "suites", "audit", "suites"],
        capture_output=True, text=True, cwd=ROOT, check=False, timeout=1500,
    )  # fmt: skip
    assert builtin.returncode == 0, builtin.stdout + builtin.stderr
    assert "pass without the model's work" not in builtin.stdout  # only tasks marked allowed
    assert "one-empty-call: passes 0 of" in builtin.stdout
    missing = subprocess.run(
        [sys.executable, "-m", "harness.cli", "suites", "audit", str(tmp_path / "nope.yaml")],
        capture_output=True, text=True, cwd=ROOT, check=False, timeout=60,
    )  # fmt: skip
    assert missing.returncode == 2


def test_tool_calls_and_combined_graders() -> None:
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "calculator", "arguments": {"expression": "6*7"}}]},
        {"text": "42"},
    ]
    result = harness.run("6*7?", provider=MockProvider(turns), tools=["calculator", "kv_get"])
    assert grade(parse_grader({"kind": "tool_calls"}), result).passed
    assert grade(
        parse_grader({"kind": "tool_calls", "value": ["calculator"], "min": 1}), result
    ).passed
    assert not grade(parse_grader({"kind": "tool_calls", "value": ["kv_get"]}), result).passed
    assert not grade(parse_grader({"kind": "tool_calls", "min": 2}), result).passed
    both = parse_grader(
        {"kind": "all", "graders": [{"kind": "tool_calls"}, {"kind": "contains", "value": "42"}]}
    )
    verdict = grade(both, result)
    assert verdict.passed
    assert verdict.explanation.startswith("all: ")
    either = parse_grader(
        {"kind": "any", "graders": [{"kind": "contains", "value": "7"},
                                    {"kind": "contains", "value": "nope"}]}
    )  # fmt: skip
    assert not grade(either, result).passed
    idle = harness.run("6*7?", provider=MockProvider([{"text": "42"}]), tools=["calculator"])
    assert not grade(both, idle).passed  # the right answer without a tool call


def test_a_judge_never_reaches_the_network_in_the_audit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-audit-test")  # a key: only the cassette stops it
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            hits.append(self.path)
            self.send_response(500)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        path = tmp_path / "judged.yaml"
        path.write_text(
            "suite: judged\ntasks:\n  - id: t\n    prompt: Capital of France?\n"
            "    expect: {kind: judge, provider: 'openai:gpt-4o-mini', rubric: Names Paris.,"
            f" provider_opts: {{base_url: '{url}', max_retries: 0}}}}\n"
        )
        report = audit_suites(load_suites([path]))
    finally:
        server.shutdown()
    assert hits == []
    assert report.findings == []
    assert report.exit_code == 0


ECHOED = """\
suite: echoed
tasks:
  - id: answer-ends-the-prompt
    prompt: "Reply: denied"
    expect: {kind: contains, value: denied}
  - id: phrase-list-trap
    prompt: "Look up the value stored under the key 'answer' with kv_get and report it."
    tools: [kv_get]
    expect:
      kind: all
      graders:
        - {kind: tool_calls}
        - {kind: contains, value: ["not found", "does not exist", "missing"]}
  - id: the-fact-trap
    prompt: "Look up the value stored under the key 'answer' with kv_get and report it."
    tools: [kv_get]
    expect:
      kind: all
      graders:
        - {kind: tool_calls, value: kv_get, arguments: {key: answer}}
        - {kind: contains, value: "'answer'", negated: true}
  - id: anywhere-number
    prompt: >-
      Pens cost 3 dollars and notebooks cost 7 dollars. Ana buys 4 pens and pays with a 50
      dollar note. What is her change? Answer with the number only.
    expect: {kind: contains, value: "38"}
    mock: {turns: [{text: "38"}]}
  - id: last-number-without-unit
    prompt: >-
      Pens cost 3 dollars and notebooks cost 7 dollars. Ana buys 4 pens and pays with a 50
      dollar note. What is her change? Answer with the number only.
    expect: {kind: number, value: 38}
    mock: {turns: [{text: "38"}]}
  - id: last-number-with-unit
    prompt: >-
      Pens cost 3 dollars and notebooks cost 7 dollars. Ana buys 4 pens and pays with a 50
      dollar note. What is her change? Answer with the number only.
    expect: {kind: number, value: 38, unit: [dollars, dollar, $]}
    mock: {turns: [{text: "38"}]}
  - id: file-holds-it
    prompt: "What does motto.txt say?"
    tools: [read_file]
    workspace: {files: {motto.txt: "slow and steady"}}
    expect: {kind: contains, value: "slow and steady", at: end}
    audit: {allow: true, adversaries: [read-echo], reason: "reading the file is the task"}
  - id: reviewer-does-the-work
    prompt: "Set the port in server.ini to 8443."
    tools: [edit_file]
    interrupt_before: [edit_file]
    workspace: {files: {server.ini: "port = 8080\\n"}}
    approvals: [{edit: {path: server.ini, old: "8080", new: "8443"}}]
    expect: {kind: file_contains, path: server.ini, value: "port = 8443"}
  - id: proposal-graded
    prompt: "Set the port in server.ini to 8443."
    tools: [edit_file]
    interrupt_before: [edit_file]
    workspace: {files: {server.ini: "port = 8080\\n"}}
    approvals: [{edit: {path: server.ini, old: "8080", new: "8443"}}]
    expect:
      kind: all
      graders:
        - {kind: tool_calls, value: edit_file, arguments: {new: "8443"}}
        - {kind: file_contains, path: server.ini, value: "port = 8443"}
"""


def test_the_echo_and_trick_adversaries_and_the_reviewers_decisions_are_applied(
    tmp_path: Path,
) -> None:
    """Each trick catches the grader it targets and passes nothing graded by the convention:
    an echo passes a prompt that ends with the answer; empty calls and failure phrases pass a
    phrase-list trap, not one graded on the call and the fact; "It is not X; the answer is
    X+1" passes a `contains` of the number, not the last number; another unit passes a number
    without `unit`; reading the named file is excused for that trick only; a single empty call
    whose reviewer edit does the work passes a file check, not a check of the model's proposal."""
    path = tmp_path / "echoed.yaml"
    path.write_text(ECHOED, encoding="utf-8")
    report = audit_suites(load_suites([str(path)]))
    found = {(f.task_id, f.adversary) for f in report.findings}
    assert ("answer-ends-the-prompt", "echo") in found
    assert ("phrase-list-trap", "give-up-phrases") in found
    assert ("anywhere-number", "not-x") in found
    assert ("last-number-without-unit", "unit-swap") in found
    assert ("file-holds-it", "read-echo") in found
    assert ("reviewer-does-the-work", "one-empty-call:edit_file") in found
    clean = {"the-fact-trap", "last-number-with-unit", "proposal-graded"}
    assert not any(t in clean for t, _ in found), found
    assert {f.task_id for f in report.failing} == {
        "answer-ends-the-prompt",
        "phrase-list-trap",
        "anywhere-number",
        "last-number-without-unit",
        "reviewer-does-the-work",
    }
    assert report.skipped["not-x"] >= 4  # no mock script: nothing to negate
