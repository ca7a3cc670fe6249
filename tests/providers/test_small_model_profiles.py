"""Profiles for small local models: few-shot examples, stop strings, the one-line text protocol,
seeds on the Anthropic wire for llama.cpp's server, and price_as, against real HTTP servers on
loopback (pytest-httpserver)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer

import harness
from harness.errors import ConfigError
from harness.providers._profiles import load_profiles

EXAMPLES = """\
- messages:
    - {role: user, content: "What is 6*7?"}
    - role: assistant
      tool_calls: [{name: calculator, arguments: {expression: "6*7"}}]
    - {role: tool, content: "42"}
    - {role: assistant, content: "42"}
- messages:
    - {role: user, content: "What does a.txt say?"}
    - role: assistant
      tool_calls: [{name: read_file, arguments: {path: a.txt}}]
    - {role: tool, content: "hello"}
    - {role: assistant, content: "hello"}
"""


def write_profile(tmp_path: Path, url: str, kind: str, extra: str = "") -> None:
    (tmp_path / "shots.yaml").write_text(EXAMPLES, encoding="utf-8")
    (tmp_path / "harness.toml").write_text(
        "[providers.tiny]\n"
        f'kind = "{kind}"\n'
        f'base_url = "{url}"\n'
        'model = "gemma-3-270m"\n'
        'tool_calls = "text"\n'
        'examples_file = "shots.yaml"\n'
        "stream = false\n"
        "max_retries = 0\n" + extra,
        encoding="utf-8",
    )


def openai_reply(content: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gemma-3-270m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100},
    }  # fmt: skip


def anthropic_reply(text: str) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "gemma-3-270m",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "stop_sequence",
        "usage": {"input_tokens": 1000, "output_tokens": 100},
    }


def test_examples_file_is_read_beside_the_profile(tmp_path: Path) -> None:
    write_profile(tmp_path, "http://127.0.0.1:1/v1", "openai")
    profile = load_profiles(tmp_path)["tiny"]
    assert [e.tool_names() for e in profile.examples] == [("calculator",), ("read_file",)]


def test_missing_examples_file_names_the_file_and_profile(tmp_path: Path) -> None:
    (tmp_path / "harness.toml").write_text(
        '[providers.tiny]\nkind = "openai"\nbase_url = "http://x/v1"\nexamples_file = "no.yaml"\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match=r"providers\.tiny.*examples_file.*no\.yaml"):
        load_profiles(tmp_path)


def test_example_roles_are_checked(tmp_path: Path) -> None:
    (tmp_path / "harness.toml").write_text(
        '[providers.tiny]\nkind = "openai"\nbase_url = "http://x/v1"\n'
        'examples = [{messages = [{role = "robot", content = "hi"}]}]\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match="role must be user, assistant or tool"):
        load_profiles(tmp_path)


def test_prices_and_price_as_together_are_refused(tmp_path: Path) -> None:
    (tmp_path / "harness.toml").write_text(
        '[providers.tiny]\nkind = "openai"\nbase_url = "http://x/v1"\nprice_as = "gpt-4o-mini"\n'
        "prices = {input_per_mtok = 0, output_per_mtok = 0}\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match="either prices or price_as"):
        load_profiles(tmp_path)


def test_unknown_price_as_model_is_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_profile(tmp_path, "http://127.0.0.1:1/v1", "openai", 'price_as = "no-such-model-9"\n')
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="price_as 'no-such-model-9'"):
        harness.run("hi", provider="tiny")


def test_tools_examples_and_results_reach_the_model_openai_wire(
    tmp_path: Path, httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_profile(
        tmp_path,
        httpserver.url_for("/v1"),
        "openai",
        'stop = ["<end_of_turn>"]\nprice_as = "openai:gpt-4o-mini"\nseeds = "honoured"\n',
    )
    monkeypatch.chdir(tmp_path)
    path = "/v1/chat/completions"
    httpserver.expect_ordered_request(path, method="POST").respond_with_json(
        openai_reply(
            '```tool_call\n{"name": "calculator", "arguments": {"expression": "9*8"}}\n```'
        )
    )
    httpserver.expect_ordered_request(path, method="POST").respond_with_json(openai_reply("72"))
    result = harness.run(
        "What is 9*8?", provider="tiny", tools=["calculator", "kv_get"], seed=3, stop=["STOP"]
    )
    httpserver.check_assertions()
    assert result.finish_reason == "stop"
    assert result.text == "72"
    # 2 calls x (1000 in, 100 out) at gpt-4o-mini's genai-prices rates (0.15 / 0.60 per Mtok).
    assert result.cost_usd == pytest.approx(2 * (1000 * 0.15 + 100 * 0.60) / 1e6)

    first, second = (json.loads(req.get_data()) for req, _ in httpserver.log)
    for body in (first, second):
        system = body["messages"][0]["content"]
        assert "### calculator" in system
        assert "### kv_get" in system
        assert body["stop"] == ["STOP", "<end_of_turn>"]
        assert body["seed"] == 3
        # The calculator example is sent (all its tools are offered); read_file's is not.
        contents = [m["content"] for m in body["messages"]]
        assert "What is 6*7?" in contents
        assert "What does a.txt say?" not in contents
    # The second request holds the model's call and its result, after the example.
    last_two = second["messages"][-2:]
    assert '"expression": "9*8"' in last_two[0]["content"]
    assert last_two[1]["content"].startswith("Result of tool call calculator (call_1):\n72")
    assert result.messages[0].content == "What is 9*8?"  # examples stay out of the transcript


def test_line_protocol_and_seed_on_the_anthropic_wire(
    tmp_path: Path, httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_profile(
        tmp_path,
        httpserver.url_for(""),
        "anthropic",
        'text_tool_format = "line"\nstop = ["\\n"]\nseeds = "honoured"\n'
        'price_as = "anthropic:claude-3-5-haiku-latest"\n',
    )
    monkeypatch.chdir(tmp_path)
    path = "/v1/messages"
    httpserver.expect_ordered_request(path, method="POST").respond_with_json(
        anthropic_reply(
            '<tool_call>{"name": "read_file", "arguments": {"path": "n.txt"}}</tool_call>'
        )
    )
    httpserver.expect_ordered_request(path, method="POST").respond_with_json(
        anthropic_reply("seven")
    )
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "n.txt").write_text("seven", encoding="utf-8")
    result = harness.run(
        "What does n.txt say?", provider="tiny", tools=["read_file"], seed=2, cwd=tmp_path / "ws"
    )
    assert result.finish_reason == "stop", result.halted_reason
    assert result.text == "seven"
    assert result.cost_usd is not None
    assert result.cost_usd > 0
    first, second = (json.loads(req.get_data()) for req, _ in httpserver.log)
    assert first["seed"] == 2
    assert first["stop_sequences"] == ["\n"]
    assert "<tool_call>" in first["system"]
    assert "- read_file(path (string))" in first["system"]
    texts = [m["content"] for m in second["messages"]]
    assert '<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}</tool_call>' in texts
    assert texts[-1].startswith("Result of tool call read_file (call_1):\nseven")


def test_no_seed_on_the_anthropic_wire_unless_the_profile_says_so(
    tmp_path: Path, httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_profile(tmp_path, httpserver.url_for(""), "anthropic")
    monkeypatch.chdir(tmp_path)
    httpserver.expect_request("/v1/messages", method="POST").respond_with_json(
        anthropic_reply("hi")
    )
    harness.run("hi", provider="tiny", seed=2)
    (body,) = (json.loads(req.get_data()) for req, _ in httpserver.log)
    assert "seed" not in body
    assert "stop_sequences" not in body


def test_line_protocol_reads_one_call_and_drops_the_run_on() -> None:
    from harness.providers._base import Response
    from harness.providers._text_tools import finish_response

    call = '<tool_call>{"name": "kv_get", "arguments": {"key": "a"}}</tool_call>'
    response = Response(text=call + ' subtree<tool_call>{"name": "kv_get", "argu')
    finish_response(response, "line")
    assert response.tool_call_error is None
    assert [(c.name, c.arguments) for c in response.tool_calls] == [("kv_get", {"key": "a"})]
    assert response.text == ""
    # The fenced protocol reads the whole reply, so the broken second block is an error there.
    fenced = Response(text=call + ' subtree<tool_call>{"name": "kv_get", "argu')
    finish_response(fenced, "fenced")
    assert fenced.tool_call_error is not None


def test_tool_less_calls_get_the_tool_history_as_text(
    tmp_path: Path, httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reflexion's critique has no tools, but the calls and results before it must reach a
    text-protocol model as text, not as native blocks its chat template cannot show."""
    write_profile(tmp_path, httpserver.url_for(""), "anthropic", 'text_tool_format = "line"\n')
    monkeypatch.chdir(tmp_path)
    path = "/v1/messages"
    call = '<tool_call>{"name": "calculator", "arguments": {"expression": "37*43"}}</tool_call>'
    for reply in (call, "The step computed the product.", "1591"):
        httpserver.expect_ordered_request(path, method="POST").respond_with_json(
            anthropic_reply(reply)
        )
    result = harness.run("37*43?", provider="tiny", tools=["calculator"], mode="reflexion")
    httpserver.check_assertions()
    assert result.finish_reason == "stop"
    critique = json.loads(httpserver.log[1][0].get_data())
    assert "tools" not in critique
    for message in critique["messages"]:
        assert isinstance(message["content"], str), message  # no tool_use / tool_result blocks
    texts = "\n".join(m["content"] for m in critique["messages"])
    assert call in texts
    assert "Result of tool call calculator (call_1):\n1591" in texts


def test_a_plan_is_not_a_prefill_and_loses_its_run_on(
    tmp_path: Path, httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Plan-and-Solve's plan is a tool-less reply: under the one-line protocol its run-on after a
    closing tag is dropped like any other reply's, and the next request does not end with it
    (on /v1/messages a trailing assistant message is a prefill the model would continue)."""
    from harness.providers._text_tools import NEXT_TURN

    write_profile(tmp_path, httpserver.url_for(""), "anthropic", 'text_tool_format = "line"\n')
    monkeypatch.chdir(tmp_path)
    path = "/v1/messages"
    call = '<tool_call>{"name": "calculator", "arguments": {"expression": "37*43"}}</tool_call>'
    for reply in (call + " mendatang", call + "した場合", "1591"):
        httpserver.expect_ordered_request(path, method="POST").respond_with_json(
            anthropic_reply(reply)
        )
    result = harness.run("37*43?", provider="tiny", tools=["calculator"], mode="plan_and_solve")
    httpserver.check_assertions()
    assert result.finish_reason == "stop", result.halted_reason
    assert result.text == "1591"
    plan = next(m for m in result.messages if m.role == "assistant")
    assert plan.content == call  # the plan as kept in the transcript, without " mendatang"
    execute, answer = (json.loads(req.get_data()) for req, _ in httpserver.log[1:])
    assert [m["role"] for m in execute["messages"][-2:]] == ["assistant", "user"]
    assert execute["messages"][-2]["content"] == call
    assert execute["messages"][-1]["content"] == NEXT_TURN
    texts = [m["content"] for m in answer["messages"]]
    assert texts[texts.index(NEXT_TURN) - 1] == call
    assert "mendatang" not in json.dumps(answer)
    assert "した場合" not in json.dumps(answer, ensure_ascii=False)


def test_run_examples_are_sent_through_the_text_protocol_whatever_tools_are_offered(
    tmp_path: Path, httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run's own few-shot examples (what the BFCL source gives each task): sent before the
    conversation with every tool-offering call, beside the profile's, never in the transcript."""
    write_profile(tmp_path, httpserver.url_for("/v1"), "openai")
    monkeypatch.chdir(tmp_path)
    path = "/v1/chat/completions"
    httpserver.expect_ordered_request(path, method="POST").respond_with_json(openai_reply("12"))
    shot = {
        "messages": [
            {"role": "user", "content": "Functions: get_area(base, height). Area of 3 by 4?"},
            {"role": "assistant", "tool_calls": [
                {"name": "get_area", "arguments": {"base": 3, "height": 4}}]},
            {"role": "tool", "content": "Done."},
            {"role": "assistant", "content": "Done."},
        ],
        "tools": [],  # sent although get_area is not among the run's tools
    }  # fmt: skip
    result = harness.run("6*2?", provider="tiny", tools=["kv_get"], examples=[shot])
    httpserver.check_assertions()
    (body,) = (json.loads(req.get_data()) for req, _ in httpserver.log)
    contents = [m["content"] for m in body["messages"]]
    assert contents[1] == "Functions: get_area(base, height). Area of 3 by 4?"
    assert '"name": "get_area"' in contents[2]  # the shot's call, written as the protocol does
    assert contents[-1] == "6*2?"
    assert "What is 6*7?" not in contents  # the profile's calculator example needs calculator
    assert result.messages[0].content == "6*2?"


def test_a_malformed_run_example_is_bad_input() -> None:
    with pytest.raises(ConfigError, match=r"examples\[0\]"):
        harness.run("hi", provider="mock", examples=[{"messages": [{"role": "system"}]}])
