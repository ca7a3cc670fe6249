"""Text-tagged tool calls for models without native tool calling: the prompt, the rewritten
history, parsing every accepted form, errors, and runs through the kernel and a real HTTP server."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer

import harness
from harness.core import Message, TokenUsage, ToolCall, ToolResult
from harness.events import RunWarning
from harness.providers._base import Capabilities, Request, Response, ToolSpec
from harness.providers._text_tool_parse import parse_reply, parse_tool_calls
from harness.providers._text_tools import (
    NEXT_TURN,
    drop_run_on,
    finish_response,
    prepare_request,
    rewrite_history,
)

CALC = ToolSpec(
    "calculator",
    "Evaluate an arithmetic expression.",
    {
        "type": "object",
        "properties": {"expression": {"type": "string"}},
        "required": ["expression"],
    },
)
READ = ToolSpec(
    "read_file",
    "Read a file in the workspace.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


def fence(obj: Any, *, mark: str = "```", tag: str = "tool_call") -> str:
    return f"{mark}{tag}\n{json.dumps(obj)}\n{mark}"


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "arguments": args}


# --- prepare_request: the prompt -----------------------------------------------------------------


def test_prompt_describes_protocol_and_lists_tools_with_schemas() -> None:
    request = Request([Message.user("hi")], system_prompt="You are terse.", tools=[CALC, READ])
    prepared = prepare_request(request)
    system = prepared.system_prompt
    assert system is not None
    assert system.startswith("You are terse.\n\n")
    assert "```tool_call" in system
    assert '"name"' in system
    assert '"arguments"' in system
    assert "plain text" in system
    for spec in (CALC, READ):
        assert f"### {spec.name}" in system
        assert spec.description in system
        assert json.dumps(spec.parameters) in system
    assert system.index("### calculator") < system.index("### read_file")
    assert prepared.tools is None
    assert prepared.tool_choice is None


def test_prompt_without_a_system_prompt_is_the_protocol_alone() -> None:
    prepared = prepare_request(Request([Message.user("hi")], tools=[CALC]))
    assert prepared.system_prompt is not None
    assert prepared.system_prompt.startswith("# Calling tools")


def test_prepare_request_copies_and_leaves_the_input_alone() -> None:
    messages = [Message.user("hi")]
    request = Request(
        messages,
        model="m",
        system_prompt="sys",
        tools=[CALC],
        tool_choice="auto",
        temperature=0.2,
        max_tokens=99,
        stop=["END"],
        provider_opts={"k": 1},
        metadata={"run": "x"},
        purpose="main",
    )
    before = copy.deepcopy(request)
    prepared = prepare_request(request)
    assert request == before
    assert prepared is not request
    assert prepared.messages is not messages
    assert prepared.provider_opts == {"k": 1}
    assert prepared.provider_opts is not request.provider_opts
    assert prepared.metadata is not request.metadata
    assert prepared.stop == ["END"]
    assert prepared.stop is not request.stop
    assert (prepared.model, prepared.temperature, prepared.max_tokens) == ("m", 0.2, 99)
    assert prepared.purpose == "main"


@pytest.mark.parametrize(
    ("choice", "needle"),
    [
        ("required", "must call at least one tool"),
        ("any", "must call at least one tool"),
        ("none", "do not call any tool"),
        (
            {"type": "function", "function": {"name": "calculator"}},
            "must call the tool `calculator`",
        ),
        ({"type": "tool", "name": "read_file"}, "must call the tool `read_file`"),
        ("calculator", "must call the tool `calculator`"),
    ],
)
def test_tool_choice_becomes_an_instruction(choice: Any, needle: str) -> None:
    prepared = prepare_request(Request([Message.user("x")], tools=[CALC, READ], tool_choice=choice))
    assert prepared.system_prompt is not None
    assert needle in prepared.system_prompt
    assert prepared.tool_choice is None


def test_auto_tool_choice_adds_no_instruction() -> None:
    auto = prepare_request(Request([Message.user("x")], tools=[CALC], tool_choice="auto"))
    unset = prepare_request(Request([Message.user("x")], tools=[CALC]))
    assert auto.system_prompt == unset.system_prompt
    assert "must call" not in (auto.system_prompt or "")


# --- prepare_request: the history ----------------------------------------------------------------


def conversation() -> list[Message]:
    return [
        Message.user("What is 17*23, and what is in notes.txt?"),
        Message.assistant(
            "Let me check.",
            [
                ToolCall("c1", "calculator", {"expression": "17*23"}),
                ToolCall("c2", "read_file", {"path": "notes.txt"}),
            ],
        ),
        Message.tool(ToolResult("c1", "391")),
        Message.tool(ToolResult("c2", "no such file: notes.txt", is_error=True)),
        Message.user("Also, be brief."),
        Message.assistant("391; the file does not exist."),
    ]


def test_history_has_no_tool_roles_and_no_native_calls() -> None:
    rewritten = prepare_request(Request(conversation(), tools=[CALC, READ])).messages
    # The history ends with an assistant turn, so the model's next turn is asked for explicitly
    # (a trailing assistant message would be a prefill that the model continues).
    assert [m.role for m in rewritten] == ["user", "assistant", "user", "assistant", "user"]
    assert rewritten[-1].content == NEXT_TURN
    assert all(m.tool_calls is None and m.tool_result is None for m in rewritten)


def test_two_assistant_turns_in_a_row_get_a_user_turn_between() -> None:
    plan = Message.assistant("1. Goal: 17*23. 2. Steps: calculator.")
    history = [Message.user("What is 17*23?"), plan]
    call = Message.assistant("", [ToolCall("c1", "calculator", {"expression": "17*23"})])
    first = prepare_request(Request(history, tools=[CALC]), fmt="line").messages
    later = prepare_request(
        Request([*history, call, Message.tool(ToolResult("c1", "391"))], tools=[CALC]), fmt="line"
    ).messages
    assert [(m.role, m.content) for m in first] == [
        ("user", "What is 17*23?"),
        ("assistant", plan.content),
        ("user", NEXT_TURN),
    ]
    # The same turn sits in the same place once the model has answered it: the history only grows.
    assert [(m.role, m.content) for m in later[:3]] == [(m.role, m.content) for m in first]
    assert [m.role for m in later[3:]] == ["assistant", "user"]
    assert later[3].content.startswith("<tool_call>")


def test_drop_run_on_cuts_after_the_closing_tag_only_for_the_line_format() -> None:
    reply = '<tool_call>{"name": "calculator", "arguments": {}}</tool_call> mendatang'
    assert drop_run_on(reply, "line") == reply.removesuffix(" mendatang")
    assert drop_run_on(reply, "fenced") == reply
    assert drop_run_on("42 mendatang", "line") == "42 mendatang"


def test_assistant_calls_are_written_back_as_blocks_that_parse_again() -> None:
    assistant = rewrite_history(conversation())[1]
    assert assistant.content.startswith("Let me check.\n\n```tool_call\n")
    calls, text, error = parse_tool_calls(assistant.content)
    assert error is None
    assert text == "Let me check."
    assert [(c.name, c.arguments) for c in calls] == [
        ("calculator", {"expression": "17*23"}),
        ("read_file", {"path": "notes.txt"}),
    ]


def test_tool_results_become_one_user_message_naming_call_and_id() -> None:
    results = rewrite_history(conversation())[2]
    assert results.role == "user"
    assert results.content == (
        "Result of tool call calculator (c1):\n391\n\n"
        "Result of tool call read_file (c2) [error]:\nno such file: notes.txt\n\n"
        "Also, be brief."
    )


def test_assistant_turn_with_only_calls_has_only_blocks() -> None:
    messages = [Message.user("x"), Message.assistant("", [ToolCall("a", "calculator", {})])]
    content = rewrite_history(messages)[1].content
    assert content == '```tool_call\n{"name": "calculator", "arguments": {}}\n```'


def test_history_rewrite_does_not_touch_the_original_messages() -> None:
    messages = conversation()
    before = copy.deepcopy(messages)
    rewrite_history(messages)
    assert messages == before


def test_plain_history_passes_through_unchanged() -> None:
    messages = [Message.system("s"), Message.user("a"), Message.assistant("b"), Message.user("c")]
    assert rewrite_history(messages) == messages


# --- parse_tool_calls: the accepted forms ---------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "calls", "rest"),
    [
        pytest.param(
            "Computing.\n" + fence(call("calculator", expression="2+2")),
            [("calculator", {"expression": "2+2"})],
            "Computing.",
            id="backtick-fence",
        ),
        pytest.param(
            fence(call("calculator", expression="1"), mark="~~~")
            + "\n"
            + fence(call("read_file", path="a"), mark="~~~"),
            [("calculator", {"expression": "1"}), ("read_file", {"path": "a"})],
            "",
            id="tilde-fences",
        ),
        pytest.param(
            "here\n" + fence(call("calculator", expression="1"), tag="json") + "\nthere",
            [("calculator", {"expression": "1"})],
            "here",  # text after the last call is a run-on, dropped
            id="json-fence",
        ),
        pytest.param(
            fence(call("calculator", expression="1"), tag=""),
            [("calculator", {"expression": "1"})],
            "",
            id="untagged-fence",
        ),
        pytest.param(
            fence([call("a"), call("b", x=1)]),
            [("a", {}), ("b", {"x": 1})],
            "",
            id="list-in-one-block",
        ),
        pytest.param(
            '```tool_call\n{"name": "a", "arguments": {}}\n{"name": "b", "arguments": {}}\n```',
            [("a", {}), ("b", {})],
            "",
            id="two-objects-in-one-block",
        ),
        pytest.param(
            '```tool_call\n{"name": "a", "arguments": {"x": 1,},}\n```',
            [("a", {"x": 1})],
            "",
            id="trailing-commas-repaired",
        ),
        pytest.param(
            '```tool_call\n{"name": "a", "arguments": "{\\"x\\": 1}"}\n```',
            [("a", {"x": 1})],
            "",
            id="arguments-as-json-string",
        ),
        pytest.param(
            '```tool_call\n{"name": "a", "parameters": {"x": 1}}\n```',
            [("a", {"x": 1})],
            "",
            id="llama-parameters-key",
        ),
        pytest.param(
            '```tool_call\n{"name": "a"}\n```',
            [("a", {})],
            "",
            id="no-arguments-means-empty",
        ),
        pytest.param(
            'I will look.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a"}}\n'
            "</tool_call>",
            [("read_file", {"path": "a"})],
            "I will look.",
            id="qwen-xml",
        ),
        pytest.param(
            '{"name": "calculator", "arguments": {"expression": "3*3"}}',
            [("calculator", {"expression": "3*3"})],
            "",
            id="raw-json",
        ),
        pytest.param(
            '  [{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"s": "}{"}}]\n',
            [("a", {}), ("b", {"s": "}{"})],
            "",
            id="raw-json-list-with-braces-in-strings",
        ),
        pytest.param(
            '<think>I should add.</think>\n{"name": "calc", "arguments": {"expression": "1"}}',
            [("calc", {"expression": "1"})],
            "<think>I should add.</think>",
            id="raw-json-after-think",
        ),
        pytest.param(
            '{"name": "a", "arguments": {}}\n{"name": "b", "arguments": {}}\nThat is all.',
            [("a", {}), ("b", {})],
            "",  # text after the last call is a run-on, dropped
            id="raw-json-several-then-text",
        ),
    ],
)
def test_parses_each_form(text: str, calls: list[tuple[str, dict[str, Any]]], rest: str) -> None:
    parsed, cleaned, error = parse_tool_calls(text)
    assert error is None
    assert [(c.name, c.arguments) for c in parsed] == calls
    assert cleaned == rest


def test_generated_ids_are_numbered_and_model_ids_kept_unless_repeated() -> None:
    text = "\n".join(
        [
            fence(call("a")),
            fence({"name": "b", "arguments": {}, "id": "mine"}),
            fence({"name": "c", "arguments": {}, "id": "mine"}),
            fence({"name": "d", "arguments": {}, "id": "call_1"}),
        ]
    )
    calls, _, error = parse_tool_calls(text)
    assert error is None
    assert [c.id for c in calls] == ["call_2", "mine", "call_3", "call_1"]


def test_fences_win_over_xml_and_raw_json() -> None:
    text = '{"name": "raw", "arguments": {}}\n' + fence(call("fenced"))
    calls, cleaned, _ = parse_tool_calls(text)
    assert [c.name for c in calls] == ["fenced"]
    assert cleaned == '{"name": "raw", "arguments": {}}'


@pytest.mark.parametrize(
    "text",
    [
        pytest.param('The call would be {"name": "a", "arguments": {}}.', id="json-mid-text"),
        pytest.param('Answer: 4\n{"name": "a", "arguments": {}}', id="json-on-a-later-line"),
        pytest.param('{"name": "a", "arguments": {}', id="unbalanced"),
        pytest.param('{"title": "x", "arguments": 1}', id="no-name"),
        pytest.param('{"name": "a", "value": 1}', id="no-arguments"),
        pytest.param('{"name": "a", "arguments": [1]}', id="arguments-not-object"),
        pytest.param("[1, 2, 3]", id="plain-list"),
    ],
)
def test_raw_json_only_when_the_reply_starts_with_a_call(text: str) -> None:
    assert parse_tool_calls(text) == ([], text, None)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("The answer is 42.", id="prose"),
        pytest.param('```json\n{"answer": 42}\n```', id="json-block-not-a-call"),
        pytest.param('```json\n{"name": "a", "argu\n```', id="invalid-json-block"),
        pytest.param(
            '```python\nprint("```tool_call")\n```\nDone.', id="fence-quoted-in-other-code"
        ),
        pytest.param(
            "```markdown\nExample:\n~~~tool_call\n{not json\n~~~\n```", id="example-in-markdown"
        ),
        pytest.param("Write ```tool_call``` blocks to call tools.", id="inline-mention"),
        pytest.param(
            '<think>maybe\n```tool_call\n{"name": "a", "arguments": {}}\n```\n</think>\nNo.',
            id="inside-think",
        ),
        pytest.param(
            'plan: <tool_call>{"name": "a"}</tool_call></think>\nAnswer.',
            id="before-unopened-think-close",
        ),
    ],
)
def test_text_without_calls_is_returned_as_is(text: str) -> None:
    assert parse_tool_calls(text) == ([], text, None)


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        pytest.param(
            '```tool_call\n{"name": "a" "arguments": {}}\n```',
            ["tool_call block 1", "invalid JSON", "line 1 column"],
            id="bad-json",
        ),
        pytest.param(
            fence(call("ok")) + '\n~~~tool_call\n{"arguments": {}}\n~~~',
            ["tool_call block 2", '"name"', "missing"],
            id="missing-name-in-second-block",
        ),
        pytest.param(
            fence({"name": "", "arguments": {}}), ['"name"', "non-empty"], id="empty-name"
        ),
        pytest.param(
            fence({"name": 7, "arguments": {}}), ['"name"', "a number"], id="name-not-string"
        ),
        pytest.param(
            fence({"name": "a", "arguments": [1, 2]}),
            ['"arguments" of a', "JSON object", "an array"],
            id="arguments-array",
        ),
        pytest.param(
            fence({"name": "a", "arguments": "not json"}),
            ['"arguments" of a', "not JSON"],
            id="arguments-bad-string",
        ),
        pytest.param(fence("calculator"), ["expected a JSON object", "a string"], id="not-object"),
        pytest.param("```tool_call\n\n```", ["empty block"], id="empty"),
        pytest.param(
            fence([call("a"), {"name": "b", "arguments": 3}]),
            ["call 2", '"arguments" of b'],
            id="bad-call-in-list",
        ),
        pytest.param(
            '```tool_call\n{"name": "a", "arguments": {"path": "x',
            ["never closed", "cut off"],
            id="unterminated-fence",
        ),
        pytest.param(
            '<tool_call>{"name": "a", "arguments": {"x": }}</tool_call>',
            ["<tool_call> 1", "invalid JSON"],
            id="bad-xml",
        ),
        pytest.param(
            '```json\n{"name": "a", "arguments": "oops"}\n```',
            ["json block", '"arguments" of a'],
            id="call-shaped-json-block",
        ),
    ],
)
def test_malformed_call_is_an_error_and_yields_no_calls(text: str, needles: list[str]) -> None:
    calls, cleaned, error = parse_tool_calls(text)
    assert calls == []
    assert cleaned == text
    assert error is not None
    for needle in needles:
        assert needle in error


def test_one_malformed_block_spoils_the_whole_reply() -> None:
    text = fence(call("a")) + "\n```tool_call\n{oops}\n```\n" + fence(call("b"))
    calls, _, error = parse_tool_calls(text)
    assert calls == []
    assert error is not None
    assert error.startswith("tool_call block 2:")


@pytest.mark.parametrize(
    "reply",
    [
        'Sure.\n```tool_call\n{"name": "a", "arguments": {}}',
        '<tool_call>{"name": "a", "arguments": {"x": 1}}',
        'I will call it.\n<tool_call>\n{"name": "a", "arguments": {}}\n',
    ],
    ids=["fence", "tag", "tag-after-text"],
)
def test_an_unclosed_block_holding_a_valid_call_is_not_a_call(reply: str) -> None:
    """The parser used to finish an unclosed tag or fence for the model (3 llama-server cells
    of the bench ran a call whose ``</tool_call>`` never came)."""
    parsed = parse_reply(reply)
    assert parsed.calls == []
    assert parsed.text == reply
    assert parsed.error is not None
    assert "never closed" in parsed.error
    assert "not a call" in parsed.error


def test_a_repair_is_listed_and_a_call_read_as_written_has_none() -> None:
    repaired = parse_reply('<tool_call>{"name": "a", "arguments": {"x": [1, 2,],}}</tool_call>')
    assert repaired.error is None
    assert [(c.name, c.arguments) for c in repaired.calls] == [("a", {"x": [1, 2]})]
    assert repaired.repairs == ["<tool_call> 1: trailing comma removed before a closing bracket"]
    clean = parse_reply('<tool_call>{"name": "a", "arguments": {"x": [1, 2]}}</tool_call>')
    assert clean.repairs == []
    assert [(c.name, c.arguments) for c in clean.calls] == [("a", {"x": [1, 2]})]


def test_long_bad_json_is_shortened_in_the_error() -> None:
    _, _, error = parse_tool_calls("```tool_call\n{" + "x" * 1000 + "\n```")
    assert error is not None
    assert len(error) < 400
    assert error.endswith("...")


# --- finish_response -----------------------------------------------------------------------------


def test_finish_response_sets_calls_cleans_text_and_finish_reason() -> None:
    response = Response(text="Checking.\n" + fence(call("calculator", expression="1+1")))
    finish_response(response)
    assert response.tool_calls == [ToolCall("call_1", "calculator", {"expression": "1+1"})]
    assert response.text == "Checking."
    assert response.finish_reason == "tool_calls"
    assert response.tool_call_error is None


def test_finish_response_keeps_plain_answers() -> None:
    response = Response(text="The answer is 2.", finish_reason="stop")
    finish_response(response)
    assert (response.text, response.tool_calls, response.finish_reason) == (
        "The answer is 2.",
        [],
        "stop",
    )


def test_finish_response_keeps_native_calls_and_their_text() -> None:
    native = [ToolCall("n1", "calculator", {"expression": "5"})]
    text = "```tool_call\n{broken\n```"
    response = Response(text=text, tool_calls=list(native), finish_reason="tool_calls")
    finish_response(response)
    assert response.tool_calls == native
    assert response.text == text
    assert response.tool_call_error is None


def test_finish_response_reports_errors_and_leaves_text_as_received() -> None:
    text = '~~~tool_call\n{"name": "calculator", "arguments": {\n~~~'
    response = Response(text=text, finish_reason="stop")
    finish_response(response)
    assert response.tool_call_error is not None
    assert "tool_call block 1" in response.tool_call_error
    assert response.text == text
    assert response.tool_calls == []
    assert response.finish_reason == "stop"


# --- through the kernel --------------------------------------------------------------------------


class TextModeProvider:
    """A model that only writes text, wired like ChatProvider wires text mode."""

    name = "textmode"
    model = "tiny"
    capabilities = Capabilities(native_tool_calls=False)

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self.requests: list[Request] = []

    async def complete(self, request: Request, on_delta: Any = None) -> Response:
        if request.tools:
            request = prepare_request(request)
        self.requests.append(request)
        response = Response(
            text=self.replies.pop(0), usage=TokenUsage(input_tokens=10, output_tokens=5)
        )
        finish_response(response)
        return response

    async def aclose(self) -> None:
        return None


async def test_kernel_runs_text_tagged_calls() -> None:
    provider = TextModeProvider(
        [
            "Let me compute.\n" + fence(call("calculator", expression="17*23")),
            "17*23 = 391.",
        ]
    )
    result = await harness.arun("What is 17*23?", provider=provider, tools=["calculator"])
    assert result.finish_reason == "stop"
    assert result.text == "17*23 = 391."
    assert result.tool_calls_made == 1
    first, second = provider.requests
    assert first.tools is None
    assert "### calculator" in (first.system_prompt or "")
    assert all(m.role != "tool" for m in second.messages)
    assert second.messages[-1].role == "user"
    assert second.messages[-1].content.startswith("Result of tool call calculator (call_1):\n")
    assert "391" in second.messages[-1].content
    assistant = result.messages[1]
    assert assistant.content == "Let me compute."
    assert assistant.tool_calls == [ToolCall("call_1", "calculator", {"expression": "17*23"})]


async def test_kernel_ends_malformed_text_call_as_schema_validation_error() -> None:
    bad = '~~~tool_call\n{"name": "calculator", "arguments": ["17*23"]}\n~~~'
    provider = TextModeProvider([bad])
    result = await harness.arun("What is 17*23?", provider=provider, tools=["calculator"])
    assert result.finish_reason == "error_schema_validation"
    assert result.halted_reason is not None
    assert result.halted_reason.startswith("tool_call_parse_failed: tool_call block 1:")
    assert result.error_diagnostic is not None
    assert result.error_diagnostic["received"] == bad
    (violation,) = result.error_diagnostic["violations"]
    assert '"arguments" of calculator must be a JSON object' in violation["reason"]
    assert result.tool_calls_made == 0
    assert result.llm_calls == 1


# --- end to end: an OpenAI-compatible server without native tool calling --------------------------


def chat_completion(content: str, prompt_tokens: int = 50) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1741569952,
        "model": "gemma-3-270m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 12, "total_tokens": 62},
    }


@pytest.fixture
def text_profile(tmp_path: Path, httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "harness.toml").write_text(
        "[providers.tiny]\n"
        'kind = "openai"\n'
        f'base_url = "{httpserver.url_for("/v1")}"\n'
        'model = "gemma-3-270m"\n'
        'tool_calls = "text"\n'
        "stream = false\n"
        "max_retries = 0\n"
        "prices = {input_per_mtok = 0, output_per_mtok = 0}\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    return "tiny"


async def test_openai_compatible_server_with_text_tool_calls(
    httpserver: HTTPServer, text_profile: str
) -> None:
    path = "/v1/chat/completions"
    httpserver.expect_ordered_request(path, method="POST").respond_with_json(
        chat_completion(
            '```tool_call\n{"name": "calculator", "arguments": {"expression": "6*7"}}\n```'
        )
    )
    httpserver.expect_ordered_request(path, method="POST").respond_with_json(
        chat_completion("6*7 is 42.", prompt_tokens=80)
    )
    result = await harness.arun("What is 6*7?", provider=text_profile, tools=["calculator"])
    httpserver.check_assertions()
    assert result.finish_reason == "stop", result.halted_reason
    assert result.text == "6*7 is 42."
    assert result.tool_calls_made == 1
    assert result.cost_usd == 0.0

    first, second = (json.loads(request.get_data()) for request, _ in httpserver.log)
    for body in (first, second):
        assert "tools" not in body
        assert "tool_choice" not in body
        assert body["messages"][0]["role"] == "system"
        assert "```tool_call" in body["messages"][0]["content"]
        assert "### calculator" in body["messages"][0]["content"]
        assert all(m["role"] in ("system", "user", "assistant") for m in body["messages"])
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "user"]
    assistant, results = second["messages"][2:]
    assert "tool_calls" not in assistant
    assert '{"name": "calculator", "arguments": {"expression": "6*7"}}' in assistant["content"]
    assert results["content"].startswith("Result of tool call calculator (call_1):\n")
    assert "42" in results["content"]


async def test_a_repaired_reply_says_so_in_the_runs_trace(
    httpserver: HTTPServer, text_profile: str
) -> None:
    path = "/v1/chat/completions"
    httpserver.expect_ordered_request(path, method="POST").respond_with_json(
        chat_completion(
            '```tool_call\n{"name": "calculator", "arguments": {"expression": "6*7",},}\n```'
        )
    )
    httpserver.expect_ordered_request(path, method="POST").respond_with_json(
        chat_completion("6*7 is 42.", prompt_tokens=80)
    )
    seen: list[Any] = []
    result = await harness.arun(
        "What is 6*7?", provider=text_profile, tools=["calculator"], on_event=seen.append
    )
    assert result.finish_reason == "stop", result.halted_reason
    assert result.tool_calls_made == 1
    warnings = [e.message for e in seen if isinstance(e, RunWarning)]
    assert warnings == [
        "call 0 (main): the reply's tool calls were read after a repair: block 1: trailing "
        "comma removed before a closing bracket"
    ]


async def test_openai_compatible_server_unclosed_tag_is_not_run(
    httpserver: HTTPServer, text_profile: str
) -> None:
    reply = '<tool_call>{"name": "calculator", "arguments": {"expression": "6*7"}}'
    httpserver.expect_ordered_request("/v1/chat/completions", method="POST").respond_with_json(
        chat_completion(reply)
    )
    result = await harness.arun("What is 6*7?", provider=text_profile, tools=["calculator"])
    assert result.finish_reason == "error_schema_validation"
    assert result.tool_calls_made == 0
    assert result.error_diagnostic is not None
    assert "never closed" in result.error_diagnostic["violations"][0]["reason"]


async def test_openai_compatible_server_malformed_text_call(
    httpserver: HTTPServer, text_profile: str
) -> None:
    reply = '```tool_call\n{"name": "calculator", "arguments": {"expression": "6*7"}\n```'
    httpserver.expect_ordered_request("/v1/chat/completions", method="POST").respond_with_json(
        chat_completion(reply)
    )
    result = await harness.arun("What is 6*7?", provider=text_profile, tools=["calculator"])
    assert result.finish_reason == "error_schema_validation"
    assert result.error_diagnostic is not None
    assert result.error_diagnostic["received"] == reply
    assert "invalid JSON" in result.error_diagnostic["violations"][0]["reason"]
