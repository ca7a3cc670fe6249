"""Calls are recorded as the model sent them (issue 33, item 1): a tool that keeps or changes its
arguments changes nothing the run records. The tool here does what BFCL's TwitterAPI does (it
keeps the list it was given and a later call extends it in place) and edits its dict argument;
the transcript, ``Result.turns``, the graders, the next request's history, the spans and the
stored row all show the arguments as sent."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import duckdb
import pytest

import harness
from harness.bench import BenchRequest, run_bench
from harness.grading import grade
from harness.grading._structured import ToolCallsGrader, model_calls
from harness.providers._mock import MockProvider
from harness.store._transcript import decode_transcript

TOOLS = '''
KEPT: list = []


class Post:
    """Keeps the mentions list it is given and tags its dict argument, as BFCL's TwitterAPI
    keeps its list (a tool of the plain protocol: no validation copies its arguments)."""

    name = "post"
    parallel_safe = False
    read_only = False
    description = "Post with mentions."
    parameters = {"type": "object", "properties": {"mentions": {"type": "array"}, "meta": {}}}

    async def run(self, args, ctx):
        KEPT.append(args["mentions"])
        args["meta"]["seen"] = True
        args["extra"] = 1
        return "posted"


class Mention:
    """Adds a mention to the last post: extends the kept list in place."""

    name = "mention"
    parallel_safe = False
    read_only = False
    description = "Mention a user in the last post."
    parameters = {"type": "object", "properties": {"user": {"type": "string"}}}

    async def run(self, args, ctx):
        KEPT[-1].append(args["user"])
        return "mentioned"


post = Post()
mention = Mention()
'''

SCRIPT: list[dict[str, Any]] = [
    {"tool_calls": [{"name": "post", "arguments": {"mentions": ["@a"], "meta": {"n": 1}}}]},
    {"tool_calls": [{"name": "mention", "arguments": {"user": "@late"}}]},
    {"text": "done"},
]
SENT = {"mentions": ["@a"], "meta": {"n": 1}}


def _tools(tmp: Path) -> Any:
    path = tmp / "keeping_tools.py"
    path.write_text(TOOLS, encoding="utf-8")
    ns: dict[str, Any] = {}
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), ns)
    return ns


def test_a_tool_that_keeps_and_changes_its_arguments_changes_no_record(tmp_path: Path) -> None:
    ns = _tools(tmp_path)
    mock = MockProvider(SCRIPT)
    seen_by_hook: list[dict[str, Any]] = []

    def meddle(payload: dict[str, Any], _id: Any) -> None:  # a hook that edits what it is given
        seen_by_hook.append(json.loads(json.dumps(payload["arguments"])))
        payload["arguments"]["hooked"] = 1

    result = harness.run(
        "post it",
        provider=mock,
        tools=[ns["post"], ns["mention"]],
        hooks={"PreToolUse": [meddle], "PostToolUse": [meddle]},
    )
    assert result.finish_reason is harness.FinishReason.STOP
    assert ns["KEPT"] == [["@a", "@late"]]  # the tool did keep and extend its copy
    first = next(m for m in result.messages if m.tool_calls)
    assert first.tool_calls is not None
    assert first.tool_calls[0].arguments == SENT  # the transcript's call
    assert result.turns[0].steps[0] == [("post", SENT)]  # Result.turns
    assert model_calls(result)[0] == ("post", SENT)  # what graders read
    assert seen_by_hook[0] == SENT  # each hook got its own copy
    # The request after the mention carries the history: the first call as sent.
    history = [m for m in mock.requests[-1].messages if m.tool_calls]
    assert history[0].tool_calls is not None
    assert history[0].tool_calls[0].arguments == SENT
    exact = ToolCallsGrader(value=["post"], arguments={"mentions": '["@a"]'})
    assert grade(exact, result, None).passed
    late = ToolCallsGrader(value=["post"], arguments={"mentions": "@late"})
    assert not grade(late, result, None).passed
    assert SCRIPT[0]["tool_calls"][0]["arguments"] == SENT  # nor the mock's script


@pytest.mark.slow  # the python grader runs in a process of its own
def test_the_stored_row_and_spans_show_the_calls_as_sent(tmp_path: Path) -> None:
    (tmp_path / "keeping_tools.py").write_text(TOOLS, encoding="utf-8")
    suite = {
        "suite": "keeping",
        "tools_module": "keeping_tools.py",
        "defaults": {"tools": ["post", "mention"]},
        "tasks": [
            {
                "id": "post-then-mention",
                "prompt": "Post, then mention @late.",
                "expect": {"kind": "python", "function": "checks:sent"},
                "mock": {"turns": SCRIPT},
            }
        ],
    }
    (tmp_path / "keeping.yaml").write_text(json.dumps(suite), encoding="utf-8")
    (tmp_path / "checks.py").write_text(
        textwrap.dedent(
            """
            def sent(result, workspace):
                call = result.turns[0].steps[0][0]
                return call[1]["mentions"] == ["@a"], repr(call)
            """
        ),
        encoding="utf-8",
    )
    db = tmp_path / "h.duckdb"
    report = run_bench(
        BenchRequest(
            suites=[str(tmp_path / "keeping.yaml")],
            modes=("react",),
            providers=("mock",),
            db=db,
            trace_file=tmp_path / "spans.jsonl",
            capture_content=True,
            progress=False,
        )
    )
    assert report.trace_file is not None
    con = duckdb.connect(str(db), read_only=True)
    try:
        passed, explanation, turns, blob = con.execute(
            "SELECT passed, grader_explanation, turns, transcript FROM results"
        ).fetchone()  # type: ignore[misc]
        tool_args = [
            json.loads(a)["gen_ai.tool.call.arguments"]
            for (a,) in con.execute(
                "SELECT attributes FROM spans WHERE name LIKE 'execute_tool post%'"
            ).fetchall()
        ]
    finally:
        con.close()
    assert passed, explanation  # the python grader saw the call as sent
    assert json.loads(turns)[0]["steps"][0] == [["post", SENT]]
    transcript = decode_transcript(blob)
    assert transcript is not None
    calls = [c for m in transcript["messages"] for c in m.get("tool_calls") or ()]
    assert calls[0]["arguments"] == SENT
    assert [json.loads(a) for a in tool_args] == [SENT]
