"""Every hook point, its payload and the decisions it honours."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import Recorder, call, error, mock, script, text, tool_turn

import harness
from harness import (
    Augment,
    ConfigError,
    Deny,
    FinishReason,
    HaltRun,
    HookEvent,
    HookMatcher,
    Inject,
    Message,
    Result,
    ToolError,
    Transform,
    arun,
    run,
)
from harness.events import Done, ToolResultEvent


class Calls:
    """A hook recorder: ``calls.hook("Name", returns=...)`` makes a callback that logs its
    invocations as ``(name, payload, id)`` and returns ``returns``."""

    def __init__(self) -> None:
        self.log: list[tuple[str, dict[str, Any], str | None]] = []

    def hook(self, name: str, returns: Any = None) -> Any:
        def fn(payload: dict[str, Any], hook_id: str | None) -> Any:
            self.log.append((name, payload, hook_id))
            return returns(payload) if callable(returns) else returns

        return fn

    def names(self) -> list[str]:
        return [n for n, _, _ in self.log]

    def payloads(self, name: str) -> list[dict[str, Any]]:
        return [p for n, p, _ in self.log if n == name]


# --------------------------------------------------------------------------------------------
# UserPromptSubmit and SessionStart


def test_user_prompt_submit_transform_replaces_the_prompt() -> None:
    provider = mock(text("ok"))
    calls = Calls()
    r = run(
        "original prompt",
        provider=provider,
        session_id="sess-1",
        hooks={"UserPromptSubmit": [calls.hook("ups", Transform("rewritten prompt"))]},
    )
    assert r.finish_reason is FinishReason.STOP
    assert calls.log == [("ups", {"prompt": "original prompt", "session_id": "sess-1"}, "sess-1")]
    sent = provider.requests[0].messages
    assert [(m.role, m.content) for m in sent] == [("user", "rewritten prompt")]
    assert r.messages[0].content == "rewritten prompt"


def test_user_prompt_submit_last_transform_wins() -> None:
    provider = mock(text("ok"))
    run(
        "p",
        provider=provider,
        hooks={
            "UserPromptSubmit": [lambda p, i: Transform("first"), lambda p, i: Transform("2nd")]
        },
    )
    assert provider.requests[0].messages[0].content == "2nd"


def test_user_prompt_submit_inject_appends() -> None:
    provider = mock(text("ok"))
    r = run(
        "the question",
        provider=provider,
        hooks={
            "UserPromptSubmit": [
                lambda p, i: Inject(["context note"]),
                lambda p, i: Inject([{"role": "assistant", "content": "noted"}]),
            ]
        },
    )
    sent = provider.requests[0].messages
    assert [(m.role, m.content) for m in sent] == [
        ("user", "the question"),
        ("user", "context note"),
        ("assistant", "noted"),
    ]
    assert r.messages[:3] == sent


def test_user_prompt_submit_halt_makes_no_calls(events: Recorder) -> None:
    provider = mock(text("never"))
    r = run(
        "p",
        provider=provider,
        on_event=events,
        hooks={"UserPromptSubmit": [lambda p, i: HaltRun("prompt rejected")]},
    )
    assert r.finish_reason is FinishReason.ERROR_HALTED
    assert r.halted_reason == "prompt rejected"
    assert r.llm_calls == 0
    assert provider.requests == []
    assert r.iterations == 0
    assert events.kinds() == ["Done"]


def test_session_start_fires_once_after_user_prompt_submit() -> None:
    calls = Calls()
    run(
        "p",
        provider="mock",
        tools=["calculator"],
        session_id="abc",
        hooks={
            "SessionStart": [calls.hook("SessionStart")],
            "UserPromptSubmit": [calls.hook("UserPromptSubmit")],
            "PreIteration": [calls.hook("PreIteration")],
        },
        provider_opts=script(tool_turn(call("calculator", expression="1")), text("1")),
    )
    assert calls.names() == ["UserPromptSubmit", "SessionStart", "PreIteration", "PreIteration"]
    assert calls.log[1] == ("SessionStart", {"session_id": "abc"}, "abc")


def test_user_prompt_submit_sees_the_users_prompt_under_extract_structured() -> None:
    """ExAthena fires UserPromptSubmit while building the state, before ``mode.init``; the hook
    must see (and be able to transform) the user's prompt, and the mode's schema instructions
    must survive a Transform."""
    provider = mock(text('{"n": 1}', **{"for": "structured"}))
    seen: list[str] = []

    def ups(payload: dict[str, Any], _id: str | None) -> Transform:
        seen.append(payload["prompt"])
        return Transform("How many moons has Earth?")

    r = harness.extract_structured(
        "how many moons?",
        schema={"type": "object", "required": ["n"]},
        provider=provider,
        hooks={"UserPromptSubmit": [ups]},
    )
    assert r.finish_reason is FinishReason.STOP
    assert seen == ["how many moons?"]
    sent = provider.requests[0].messages[-1].content
    assert "How many moons has Earth?" in sent
    assert '"required"' in sent  # the schema is still in the prompt


# --------------------------------------------------------------------------------------------
# PreIteration


def test_pre_iteration_payload() -> None:
    calls = Calls()
    run(
        "p",
        provider="mock",
        tools=["calculator"],
        session_id="s9",
        hooks={"PreIteration": [calls.hook("pre")]},
        provider_opts=script(
            tool_turn(call("calculator", expression="1+1")),
            tool_turn(call("calculator", expression="1+1")),
            text("2"),
        ),
    )
    payloads = calls.payloads("pre")
    assert [(p["iteration"], p["unproductive_iterations"]) for p in payloads] == [
        (0, 0),
        (1, 0),
        (2, 1),
    ]
    assert payloads[0]["fingerprint"] is None
    assert payloads[1]["fingerprint"] == (
        (("calculator", '{"expression":"1+1"}'),),
        payloads[1]["fingerprint"][1],
    )
    assert payloads[2]["fingerprint"] == payloads[1]["fingerprint"]
    assert all(p["session_id"] == "s9" for p in payloads)
    assert [i for _, _, i in calls.log] == ["s9", "s9", "s9"]


def test_pre_iteration_inject_is_persisted() -> None:
    provider = mock(tool_turn(call("calculator", expression="1+1")), text("2"))

    def nudge(payload: dict[str, Any], _id: str | None) -> Any:
        return Inject(["please wrap up"]) if payload["iteration"] == 1 else None

    r = run("p", provider=provider, tools=["calculator"], hooks={"PreIteration": [nudge]})
    assert [(m.role, m.content) for m in r.messages] == [
        ("user", "p"),
        ("assistant", ""),
        ("tool", "2"),
        ("user", "please wrap up"),
        ("assistant", "2"),
    ]
    assert len(provider.requests[0].messages) == 1
    assert provider.requests[1].messages[-1].content == "please wrap up"


def test_pre_iteration_halt_mid_run() -> None:
    def halt_at_1(payload: dict[str, Any], _id: str | None) -> Any:
        return (
            HaltRun(f"stuck: {payload['unproductive_iterations']}")
            if payload["iteration"]
            else None
        )

    r = run(
        "p",
        provider="mock",
        tools=["calculator"],
        hooks={"PreIteration": [halt_at_1]},
        provider_opts=script(tool_turn(call("calculator", expression="1")), text("never")),
    )
    assert r.finish_reason is FinishReason.ERROR_HALTED
    assert r.halted_reason == "stuck: 0"
    assert r.llm_calls == 1
    assert r.iterations == 1


# --------------------------------------------------------------------------------------------
# ChatParams


def test_chat_params_inject_goes_into_the_request() -> None:
    provider = mock(text("ok"))
    calls = Calls()
    r = run(
        "p",
        provider=provider,
        hooks={"ChatParams": [calls.hook("cp", Inject(["reminder: be brief"]))]},
    )
    sent = provider.requests[0].messages
    assert [m.content for m in sent] == ["p", "reminder: be brief"]
    assert [m.content for m in r.messages] == ["p", "reminder: be brief", "ok"]
    payload = calls.payloads("cp")[0]
    assert payload["request"].purpose == "main"
    assert payload["messages"] is payload["request"].messages


def test_chat_params_halt() -> None:
    provider = mock(text("never"))
    r = run("p", provider=provider, hooks={"ChatParams": [lambda p, i: HaltRun("rate limit")]})
    assert r.finish_reason is FinishReason.ERROR_HALTED
    assert r.halted_reason == "rate limit"
    assert r.llm_calls == 0
    assert provider.requests == []


# --------------------------------------------------------------------------------------------
# PreToolUse, PermissionDenied


def test_pre_tool_use_deny_is_an_error_result_and_a_mistake(events: Recorder) -> None:
    calls = Calls()
    r = run(
        "p",
        provider="mock",
        tools=["calculator"],
        max_consecutive_mistakes=1,
        on_event=events,
        hooks={
            "PreToolUse": [calls.hook("pre", Deny("no maths today"))],
            "PermissionDenied": [calls.hook("denied")],
        },
        provider_opts=script(tool_turn(call("calculator", expression="1+1", **{})), text("never")),
    )
    assert r.finish_reason is FinishReason.ERROR_CONSECUTIVE_MISTAKES
    result = events.of(ToolResultEvent)[0].result
    assert result.is_error
    assert result.content == "permission denied: no maths today"
    assert r.messages[-1].content == "permission denied: no maths today"
    call_id = result.tool_call_id
    assert calls.names() == ["pre", "denied"]
    pre_payload, denied_payload = calls.log[0][1], calls.log[1][1]
    assert pre_payload["tool_name"] == "calculator"
    assert pre_payload["arguments"] == {"expression": "1+1"}
    assert calls.log[0][2] == call_id
    assert denied_payload == {
        "tool_name": "calculator",
        "arguments": {"expression": "1+1"},
        "reason": "permission denied: no maths today",
        "code": "user_denied",
    }
    assert calls.log[1][2] == call_id


def test_pre_tool_use_deny_then_allow_resets() -> None:
    state = {"n": 0}

    def deny_first(payload: dict[str, Any], _id: str | None) -> Any:
        state["n"] += 1
        return Deny("not yet") if state["n"] == 1 else None

    r = run(
        "p",
        provider="mock",
        tools=["calculator"],
        max_consecutive_mistakes=2,
        hooks={"PreToolUse": [deny_first]},
        provider_opts=script(
            tool_turn(call("calculator", expression="1+1")),
            tool_turn(call("calculator", expression="2+2")),
            text("4"),
        ),
    )
    assert r.finish_reason is FinishReason.STOP
    assert [m.content for m in r.messages if m.role == "tool"] == [
        "permission denied: not yet",
        "4",
    ]


def test_pre_tool_use_halt(events: Recorder) -> None:
    r = run(
        "p",
        provider="mock",
        tools=["calculator", "kv_set"],
        on_event=events,
        hooks={
            "PreToolUse": [
                lambda p, i: HaltRun("dangerous") if p["tool_name"] == "kv_set" else None
            ]
        },
        provider_opts=script(
            tool_turn(call("kv_set", key="a", value=1), call("calculator", expression="1")),
            text("never"),
        ),
    )
    assert r.finish_reason is FinishReason.ERROR_HALTED
    assert r.halted_reason == "dangerous"
    assert r.llm_calls == 1
    # the halt stops the batch: the later (parallel-safe) calculator call never runs
    assert [e.call.name for e in events.of(ToolResultEvent)] == ["kv_set"]
    assert events.of(ToolResultEvent)[0].result.content == "run halted: dangerous"


def test_pre_tool_use_matcher_only_fires_for_matching_tools() -> None:
    calls = Calls()
    r = run(
        "p",
        provider="mock",
        tools=["calculator", "kv_set", "kv_get"],
        hooks={
            "PreToolUse": [
                {"matcher": "^kv_", "hooks": [calls.hook("kv")]},
                HookMatcher("calc", [calls.hook("calc")]),
                calls.hook("all"),
            ]
        },
        provider_opts=script(
            tool_turn(call("calculator", expression="1")),
            tool_turn(call("kv_set", key="a", value=1)),
            tool_turn(call("kv_get", key="a")),
            text("done"),
        ),
    )
    assert r.finish_reason is FinishReason.STOP
    fired = [(n, p["tool_name"]) for n, p, _ in calls.log]
    assert fired == [
        ("calc", "calculator"),
        ("all", "calculator"),
        ("kv", "kv_set"),
        ("all", "kv_set"),
        ("kv", "kv_get"),
        ("all", "kv_get"),
    ]


def test_permission_denied_fires_for_permission_gate_too() -> None:
    calls = Calls()
    run(
        "p",
        provider="mock",
        tools=["calculator", "kv_set"],
        disallowed_tools=["kv_set"],
        hooks={
            "PermissionDenied": [calls.hook("denied")],
            "PreToolUse": [calls.hook("pre")],
        },
        provider_opts=script(tool_turn(call("kv_set", key="a", value=1)), text("ok")),
    )
    # the gate denies before PreToolUse is asked
    assert calls.names() == ["denied"]
    assert calls.log[0][1]["reason"] == "permission denied: tool 'kv_set' is disallowed"


# --------------------------------------------------------------------------------------------
# PostToolUse, PostToolUseFailure


def test_post_tool_use_augment_is_appended() -> None:
    calls = Calls()
    r = run(
        "p",
        provider="mock",
        tools=["calculator"],
        hooks={
            "PostToolUse": [
                calls.hook("post", Augment("note: double-check units")),
                lambda p, i: Augment("second note"),
            ]
        },
        provider_opts=script(tool_turn(call("calculator", expression="20+22")), text("42")),
    )
    tool_msg = r.messages[2]
    assert tool_msg.content == "42\n\nnote: double-check units\nsecond note"
    assert tool_msg.tool_result is not None
    assert tool_msg.tool_result.content == tool_msg.content
    payload = calls.payloads("post")[0]
    assert payload["tool_name"] == "calculator"
    assert payload["arguments"] == {"expression": "20+22"}
    assert payload["result"] == "42"
    assert payload["is_error"] is False


def test_post_tool_use_fires_for_error_results_too() -> None:
    calls = Calls()
    run(
        "p",
        provider="mock",
        tools=["calculator"],
        hooks={"PostToolUse": [calls.hook("post")]},
        provider_opts=script(tool_turn(call("calculator", expression="1/0")), text("oops")),
    )
    payload = calls.payloads("post")[0]
    assert payload["is_error"] is True
    assert payload["result"].startswith("error:")


def test_post_tool_use_halt_wins_over_augment(events: Recorder) -> None:
    r = run(
        "p",
        provider="mock",
        tools=["calculator"],
        on_event=events,
        hooks={
            "PostToolUse": [lambda p, i: Augment("x"), lambda p, i: HaltRun("result is secret")]
        },
        provider_opts=script(tool_turn(call("calculator", expression="1")), text("never")),
    )
    assert r.finish_reason is FinishReason.ERROR_HALTED
    assert r.halted_reason == "result is secret"
    assert r.llm_calls == 1
    assert events.of(ToolResultEvent)[0].result.content == "1"


def test_post_tool_use_failure_on_raise_and_tool_error() -> None:
    @harness.tool
    def crashes() -> str:
        """Crashes."""
        raise RuntimeError("disk on fire")

    @harness.tool
    def refuses() -> str:
        """Refuses."""
        raise ToolError("bad input")

    calls = Calls()
    r = run(
        "p",
        provider="mock",
        tools=[crashes, refuses, "calculator"],
        hooks={"PostToolUseFailure": [calls.hook("fail", HaltRun("ignored"))]},
        provider_opts=script(
            tool_turn(call("crashes"), call("refuses"), call("calculator", expression="1")),
            text("done"),
        ),
    )
    # a failure hook cannot halt the run
    assert r.finish_reason is FinishReason.STOP
    assert all(m.tool_result for m in r.messages if m.role == "tool")
    ids = [m.tool_result.tool_call_id for m in r.messages if m.role == "tool" and m.tool_result]
    assert [(p["tool_name"], p["reason"]) for p in calls.payloads("fail")] == [
        ("crashes", "tool crashed: RuntimeError: disk on fire"),
        ("refuses", "bad input"),
    ]
    assert [p["tool_use_id"] for p in calls.payloads("fail")] == ids[:2]
    assert [i for _, _, i in calls.log] == ids[:2]


# --------------------------------------------------------------------------------------------
# Stop, StopFailure, SessionEnd


def _lifecycle(calls: Calls) -> dict[str, list[Any]]:
    return {
        "Stop": [calls.hook("Stop")],
        "StopFailure": [calls.hook("StopFailure")],
        "SessionEnd": [calls.hook("SessionEnd")],
    }


def test_stop_then_session_end_on_success() -> None:
    calls = Calls()
    order: list[str] = []

    def on_event(e: Any) -> None:
        if isinstance(e, Done):
            order.extend(calls.names())
            order.append("Done")

    r = run(
        "p",
        provider="mock",
        session_id="s1",
        hooks=_lifecycle(calls),
        on_event=on_event,
        provider_opts=script(text("hi")),
    )
    assert order == ["Stop", "SessionEnd", "Done"]
    payload = calls.payloads("Stop")[0]
    assert payload["finish_reason"] == "stop"
    assert payload["session_id"] == "s1"
    assert payload["result"] is r
    assert calls.payloads("SessionEnd")[0]["result"] is r


def test_stop_fires_for_submitted() -> None:
    calls = Calls()
    run(
        "p",
        provider="mock",
        tools=["finish"],
        hooks=_lifecycle(calls),
        provider_opts=script(tool_turn(call("finish", deliverable=1))),
    )
    assert calls.names() == ["Stop", "SessionEnd"]
    assert calls.payloads("Stop")[0]["finish_reason"] == "submitted"


@pytest.mark.parametrize(
    ("turns", "reason"),
    [
        ([error(401, "no")], "error_provider_auth"),
        ([error(500, "boom")], "error_during_execution"),
        ([tool_turn(call("nope", i=i)) for i in range(3)], "error_consecutive_mistakes"),
    ],
)
def test_stop_failure_then_session_end_on_error(turns: list[dict[str, Any]], reason: str) -> None:
    calls = Calls()
    r = run(
        "p",
        provider="mock",
        tools=["calculator"],
        hooks=_lifecycle(calls),
        provider_opts=script(*turns),
    )
    assert r.finish_reason.value == reason
    assert calls.names() == ["StopFailure", "SessionEnd"]
    assert calls.payloads("StopFailure")[0]["finish_reason"] == reason


def test_session_end_fires_even_when_halted_before_the_loop() -> None:
    calls = Calls()
    hooks = _lifecycle(calls)
    hooks["UserPromptSubmit"] = [lambda p, i: HaltRun("no")]
    run("p", provider="mock", hooks=hooks, provider_opts=script())
    assert calls.names() == ["StopFailure", "SessionEnd"]


# --------------------------------------------------------------------------------------------
# Async hooks, crashing hooks, bad hook tables


async def test_async_hooks_are_awaited() -> None:
    provider = mock(tool_turn(call("calculator", expression="2+2")), text("4"))
    seen: list[str] = []

    async def chat_params(payload: dict[str, Any], _id: str | None) -> Inject:
        seen.append("cp")
        return Inject(["async inject"])

    async def post(payload: dict[str, Any], _id: str | None) -> Augment:
        seen.append(payload["tool_name"])
        return Augment("async augment")

    async def end(payload: dict[str, Any], _id: str | None) -> None:
        seen.append(f"end:{payload['finish_reason']}")

    r = await arun(
        "p",
        provider=provider,
        tools=["calculator"],
        hooks={"ChatParams": [chat_params], "PostToolUse": [post], "SessionEnd": [end]},
    )
    assert r.finish_reason is FinishReason.STOP
    assert seen == ["cp", "calculator", "cp", "end:stop"]
    assert provider.requests[0].messages[-1].content == "async inject"
    assert r.messages[3].content == "4\n\nasync augment"


def test_callable_object_returning_awaitable_is_awaited() -> None:
    class Hook:
        def __call__(self, payload: dict[str, Any], _id: str | None) -> Any:
            async def go() -> HaltRun:
                return HaltRun("from awaitable")

            return go()

    r = run("p", provider="mock", hooks={"PreIteration": [Hook()]}, provider_opts=script())
    assert r.finish_reason is FinishReason.ERROR_HALTED
    assert r.halted_reason == "from awaitable"


@pytest.mark.parametrize(
    "hook_name", ["UserPromptSubmit", "SessionStart", "PreIteration", "ChatParams", "PreToolUse"]
)
def test_raising_hook_halts_with_the_exception(hook_name: str) -> None:
    def bad(payload: dict[str, Any], _id: str | None) -> None:
        raise ValueError("hook bug 17")

    r = run(
        "p",
        provider="mock",
        tools=["calculator"],
        hooks={hook_name: [bad]},
        provider_opts=script(tool_turn(call("calculator", expression="1")), text("no")),
    )
    assert r.finish_reason is FinishReason.ERROR_HALTED
    assert r.halted_reason is not None
    assert "ValueError" in r.halted_reason
    assert "hook bug 17" in r.halted_reason
    assert hook_name in r.halted_reason


def test_raising_async_hook_halts() -> None:
    async def bad(payload: dict[str, Any], _id: str | None) -> None:
        raise LookupError("async hook bug")

    r = run("p", provider="mock", hooks={"PreIteration": [bad]}, provider_opts=script())
    assert r.finish_reason is FinishReason.ERROR_HALTED
    assert r.halted_reason == "hook_crashed: PreIteration: LookupError: async hook bug"


def test_unsupported_hook_return_value_halts() -> None:
    r = run("p", provider="mock", hooks={"PreIteration": [lambda p, i: 42]}, provider_opts=script())
    assert r.finish_reason is FinishReason.ERROR_HALTED
    assert r.halted_reason is not None
    assert "unsupported return value 42" in r.halted_reason


def test_first_halt_short_circuits() -> None:
    later: list[str] = []
    r = run(
        "p",
        provider="mock",
        hooks={
            "PreIteration": [
                lambda p, i: HaltRun("first"),
                # append returns None, so the `or` gives the HaltRun
                lambda p, i: later.append("ran") or HaltRun("second"),  # type: ignore[func-returns-value]
            ]
        },
        provider_opts=script(),
    )
    assert r.halted_reason == "first"
    assert later == []


def test_single_callable_instead_of_list() -> None:
    r = run(
        "p",
        provider="mock",
        hooks={"PreIteration": lambda p, i: HaltRun("solo")},
        provider_opts=script(),
    )
    assert r.halted_reason == "solo"


@pytest.mark.parametrize(
    ("hooks", "message"),
    [
        ({"PreToolUs": [print]}, r"unknown hook event 'PreToolUs'; did you mean 'PreToolUse'\?"),
        ({"pre_iteration": [print]}, r"unknown hook event 'pre_iteration'"),
        (
            {"PreToolUse": [{"matcher": "(", "hooks": [print]}]},
            r"matcher '\(' is not a valid regex",
        ),
        ({"PreIteration": [{"matcher": "x", "hooks": [print]}]}, r"a matcher only applies to tool"),
        ({"PreToolUse": [{"matcher": "x", "hook": [print]}]}, r"unknown keys \['hook'\]"),
        ({"Stop": ["not callable"]}, r"expected a callable"),
    ],
)
def test_bad_hook_tables_are_config_errors(hooks: dict[str, Any], message: str) -> None:
    recorded = Recorder()
    with pytest.raises(ConfigError, match=message):
        run("p", provider="mock", hooks=hooks, on_event=recorded, provider_opts=script(text("x")))
    assert recorded == []


def test_inject_accepts_message_objects_and_dicts() -> None:
    provider = mock(text("ok"))
    run(
        "p",
        provider=provider,
        hooks={
            "PreIteration": [
                lambda p, i: Inject([Message.system("sys note"), {"role": "user", "content": "u"}])
            ]
        },
    )
    assert [(m.role, m.content) for m in provider.requests[0].messages] == [
        ("user", "p"),
        ("system", "sys note"),
        ("user", "u"),
    ]


def test_result_type_in_stop_payload() -> None:
    got: list[Any] = []
    run(
        "p",
        provider="mock",
        hooks={"SessionEnd": [lambda p, i: got.append(p["result"])]},
        provider_opts=script(text("x")),
    )
    assert isinstance(got[0], Result)
    assert got[0].text == "x"


def test_hook_event_names_every_point_and_keys_hooks_like_its_string() -> None:
    """``HookEvent`` members key ``hooks=`` as their strings do; a run with one tool call fires
    the points of a finished run in order, and never the compaction, failure or sub-agent ones."""
    calls = Calls()
    r = run(
        "q",
        provider=mock(tool_turn(call("calculator", expression="1+1")), text("2")),
        tools=["calculator"],
        hooks={event: [calls.hook(event.value)] for event in HookEvent},
    )
    assert r.finish_reason is FinishReason.STOP
    assert calls.names() == [
        HookEvent.USER_PROMPT_SUBMIT,  # first: it may rewrite the prompt the session starts with
        HookEvent.SESSION_START,
        HookEvent.PRE_ITERATION,
        HookEvent.CHAT_PARAMS,
        HookEvent.PRE_TOOL_USE,
        HookEvent.POST_TOOL_USE,
        HookEvent.PRE_ITERATION,
        HookEvent.CHAT_PARAMS,
        HookEvent.STOP,
        HookEvent.SESSION_END,
    ]
