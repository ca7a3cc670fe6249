"""Permissions: phases, allow/deny lists and the can_use_tool callback, seen through whole runs.

Every test drives a real run on the scripted mock provider and checks what ran, what the model was
told and how the run ended.
"""

from __future__ import annotations

from typing import Any

import pytest

import harness
from harness import Deny, FinishReason, HaltRun, ToolContext, tool
from harness.core import Message
from harness.kernel import Denial, Permissions, Phase
from harness.providers._mock import MockProvider

#: Every phase the kernel knows (a new one is covered by the tests over all phases).
PHASES = [phase.value for phase in Phase]


def recording_tool(
    name: str, log: list[tuple[str, int]], *, read_only: bool = False, parallel_safe: bool = False
) -> Any:
    """A tool that records each execution as ``(name, n)``."""

    def fn(n: int = 0) -> str:
        log.append((name, n))
        return f"{name} ran {n}"

    return tool(fn, name=name, read_only=read_only, parallel_safe=parallel_safe)


def tool_turn(*calls: tuple[str, dict[str, Any]], text: str = "") -> dict[str, Any]:
    turn: dict[str, Any] = {"tool_calls": [{"name": n, "arguments": a} for n, a in calls]}
    if text:
        turn["text"] = text
    return turn


def tool_messages(messages: list[Message]) -> list[Message]:
    return [m for m in messages if m.role == "tool"]


class Asker:
    """A can_use_tool callback that records what it was asked and answers ``answer``."""

    def __init__(self, answer: Any = True) -> None:
        self.answer = answer
        self.asked: list[tuple[str, dict[str, Any], Any]] = []

    def __call__(self, name: str, args: dict[str, Any], ctx: Any) -> Any:
        self.asked.append((name, args, ctx))
        return self.answer


def denial_codes() -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A PermissionDenied hook table that records each payload."""
    seen: list[dict[str, Any]] = []

    def hook(payload: dict[str, Any], tool_use_id: str | None) -> None:
        seen.append(payload)

    return seen, {"PermissionDenied": [hook]}


# --- the plan phase ----------------------------------------------------------------------------


def test_plan_phase_allows_read_only_tools_and_denies_writes_as_phase_gated() -> None:
    log: list[tuple[str, int]] = []
    reader = recording_tool("peek", log, read_only=True)
    writer = recording_tool("poke", log)
    seen, hooks = denial_codes()
    result = harness.run(
        "go",
        provider="mock",
        provider_opts={
            "turns": [
                tool_turn(("peek", {"n": 1}), ("poke", {"n": 2})),
                {"text": "done"},
            ]
        },
        tools=[reader, writer],
        phase="plan",
        hooks=hooks,
    )
    assert result.finish_reason is FinishReason.STOP
    assert log == [("peek", 1)]
    results = [m.tool_result for m in tool_messages(result.messages)]
    assert results[0] is not None
    assert results[0].content == "peek ran 1"
    assert not results[0].is_error
    assert results[1] is not None
    assert results[1].is_error
    assert results[1].content == (
        "permission denied: tool 'poke' is not available in the plan phase (read-only tools only)"
    )
    assert [(p["tool_name"], p["code"]) for p in seen] == [("poke", "phase_gated")]


def test_plan_phase_builtins_read_file_allowed_write_file_denied_finish_allowed() -> None:
    seen, hooks = denial_codes()
    result = harness.run(
        "go",
        provider="mock",
        provider_opts={
            "turns": [
                tool_turn(
                    ("read_file", {"path": "notes.txt"}),
                    ("write_file", {"path": "out.txt", "content": "x"}),
                ),
                tool_turn(("finish", {"deliverable": "the plan"})),
            ]
        },
        tools=["read_file", "write_file", "finish"],
        workspace_files={"notes.txt": "hello from notes"},
        phase="plan",
        hooks=hooks,
    )
    assert result.finish_reason is FinishReason.SUBMITTED
    assert result.deliverable == "the plan"
    read, write = (m.tool_result for m in tool_messages(result.messages))
    assert read is not None
    assert not read.is_error
    assert "hello from notes" in read.content
    assert write is not None
    assert write.is_error
    assert "not available in the plan phase" in write.content
    assert [(p["tool_name"], p["code"]) for p in seen] == [("write_file", "phase_gated")]


def test_plan_phase_allows_kv_set_session_tool() -> None:
    result = harness.run(
        "go",
        provider="mock",
        provider_opts={
            "turns": [
                tool_turn(("kv_set", {"key": "k", "value": 1})),
                tool_turn(("kv_get", {"key": "k"})),
                {"text": "done"},
            ]
        },
        tools=["kv_set", "kv_get"],
        phase="plan",
    )
    assert result.finish_reason is FinishReason.STOP
    outs = [m.tool_result for m in tool_messages(result.messages)]
    assert all(r is not None and not r.is_error for r in outs)


# --- default, accept_edits, trusted, bypass ----------------------------------------------------


def test_default_phase_consults_can_use_tool_with_name_args_and_context() -> None:
    log: list[tuple[str, int]] = []
    asker = Asker(True)
    result = harness.run(
        "go",
        provider="mock",
        provider_opts={"turns": [tool_turn(("t", {"n": 7})), {"text": "done"}]},
        tools=[recording_tool("t", log, read_only=True)],
        can_use_tool=asker,
    )
    assert result.finish_reason is FinishReason.STOP
    assert log == [("t", 7)]
    assert len(asker.asked) == 1
    name, args, ctx = asker.asked[0]
    assert (name, args) == ("t", {"n": 7})
    assert isinstance(ctx, ToolContext)
    assert ctx.session_id == result.session_id


def test_default_phase_without_callback_allows_everything() -> None:
    log: list[tuple[str, int]] = []
    result = harness.run(
        "go",
        provider="mock",
        provider_opts={"turns": [tool_turn(("w", {"n": 1})), {"text": "done"}]},
        tools=[recording_tool("w", log)],
        phase="default",
    )
    assert result.finish_reason is FinishReason.STOP
    assert log == [("w", 1)]


def test_accept_edits_skips_callback_for_read_only_and_edit_tools_and_asks_for_others() -> None:
    log: list[tuple[str, int]] = []
    asker = Asker(True)
    result = harness.run(
        "go",
        provider="mock",
        provider_opts={
            "turns": [
                tool_turn(
                    ("peek", {"n": 1}),
                    ("read_file", {"path": "a.txt"}),
                    ("write_file", {"path": "b.txt", "content": "new"}),
                    ("edit_file", {"path": "a.txt", "old": "alpha", "new": "beta"}),
                    ("kv_set", {"key": "k", "value": 2}),
                    ("shell_like", {"n": 2}),
                ),
                {"text": "done"},
            ]
        },
        tools=[
            recording_tool("peek", log, read_only=True),
            recording_tool("shell_like", log),
            "read_file",
            "write_file",
            "edit_file",
            "kv_set",
        ],
        workspace_files={"a.txt": "alpha"},
        phase="accept_edits",
        can_use_tool=asker,
    )
    assert result.finish_reason is FinishReason.STOP
    assert [a[0] for a in asker.asked] == ["shell_like"]
    assert log == [("peek", 1), ("shell_like", 2)]
    outs = [m.tool_result for m in tool_messages(result.messages)]
    assert [r is not None and r.is_error for r in outs] == [False] * 6


def test_accept_edits_denial_by_callback_applies_to_non_edit_tools_only() -> None:
    log: list[tuple[str, int]] = []
    asker = Asker("deny")
    result = harness.run(
        "go",
        provider="mock",
        provider_opts={
            "turns": [
                tool_turn(("write_file", {"path": "b.txt", "content": "x"}), ("other", {"n": 3})),
                {"text": "done"},
            ]
        },
        tools=["write_file", recording_tool("other", log)],
        phase="accept_edits",
        can_use_tool=asker,
    )
    write, other = (m.tool_result for m in tool_messages(result.messages))
    assert write is not None
    assert not write.is_error
    assert other is not None
    assert other.is_error
    assert other.content == "permission denied: denied by callback"
    assert log == []
    assert [a[0] for a in asker.asked] == ["other"]


def test_accept_edits_asks_callback_for_finish() -> None:
    # finish is neither read-only nor an edit tool (ExAthena A9: accept_edits asks for it).
    asker = Asker(True)
    result = harness.run(
        "go",
        provider="mock",
        provider_opts={"turns": [tool_turn(("finish", {"deliverable": 1}))]},
        tools=["finish"],
        phase="accept_edits",
        can_use_tool=asker,
    )
    assert result.finish_reason is FinishReason.SUBMITTED
    assert [a[0] for a in asker.asked] == ["finish"]


@pytest.mark.parametrize("phase", ["trusted", "bypass_permissions"])
def test_trusted_and_bypass_never_call_the_callback(phase: str) -> None:
    log: list[tuple[str, int]] = []
    asker = Asker("deny")
    result = harness.run(
        "go",
        provider="mock",
        provider_opts={
            "turns": [
                tool_turn(("w", {"n": 1}), ("r", {"n": 2})),
                tool_turn(("write_file", {"path": "x.txt", "content": "y"})),
                {"text": "done"},
            ]
        },
        tools=[recording_tool("w", log), recording_tool("r", log, read_only=True), "write_file"],
        phase=phase,
        can_use_tool=asker,
    )
    assert result.finish_reason is FinishReason.STOP
    assert asker.asked == []
    assert log == [("w", 1), ("r", 2)]
    assert not any(m.tool_result.is_error for m in tool_messages(result.messages))  # type: ignore[union-attr]


async def test_check_answers_none_or_a_denial_with_its_code() -> None:
    """``Permissions.check`` on its own: None allows; a :class:`Denial` says why and how."""
    plan = Permissions(phase=Phase.PLAN)
    assert await plan.check("read_file", {}, True, None) is None
    assert await plan.check("todo_write", {}, False, None) is None  # a session tool
    assert await plan.check("write_file", {"path": "a"}, False, None) == Denial(
        "permission denied: tool 'write_file' is not available in the plan phase "
        "(read-only tools only)",
        "phase_gated",
    )
    listed = Permissions(phase=Phase.BYPASS_PERMISSIONS, disallowed_tools=frozenset({"shell"}))
    assert await listed.check("shell", {}, True, None) == Denial(
        "permission denied: tool 'shell' is disallowed", "user_denied"
    )
    assert await listed.check("write_file", {}, False, None) is None


# --- allow and deny lists ----------------------------------------------------------------------


@pytest.mark.parametrize("phase", PHASES)
def test_disallowed_tools_deny_in_every_phase(phase: str) -> None:
    log: list[tuple[str, int]] = []
    asker = Asker(True)
    seen, hooks = denial_codes()
    result = harness.run(
        "go",
        provider="mock",
        provider_opts={"turns": [tool_turn(("bad", {"n": 1}), ("good", {"n": 2})), {"text": "ok"}]},
        tools=[
            recording_tool("bad", log, read_only=True),
            recording_tool("good", log, read_only=True),
        ],
        disallowed_tools=["bad"],
        phase=phase,
        can_use_tool=asker,
        hooks=hooks,
    )
    assert result.finish_reason is FinishReason.STOP
    assert log == [("good", 2)]
    bad = tool_messages(result.messages)[0].tool_result
    assert bad is not None
    assert bad.is_error
    assert bad.content == "permission denied: tool 'bad' is disallowed"
    assert [(p["tool_name"], p["code"]) for p in seen] == [("bad", "user_denied")]
    assert "bad" not in [a[0] for a in asker.asked]


@pytest.mark.parametrize("phase", ["default", "bypass_permissions"])
def test_allowed_tools_denies_every_other_name(phase: str) -> None:
    log: list[tuple[str, int]] = []
    result = harness.run(
        "go",
        provider="mock",
        provider_opts={"turns": [tool_turn(("a", {"n": 1}), ("b", {"n": 2})), {"text": "ok"}]},
        tools=[recording_tool("a", log), recording_tool("b", log)],
        allowed_tools=["a"],
        phase=phase,
    )
    assert log == [("a", 1)]
    a, b = (m.tool_result for m in tool_messages(result.messages))
    assert a is not None
    assert not a.is_error
    assert b is not None
    assert b.is_error
    assert b.content == "permission denied: tool 'b' is not in allowed_tools"


def test_disallowed_wins_over_allowed() -> None:
    log: list[tuple[str, int]] = []
    result = harness.run(
        "go",
        provider="mock",
        provider_opts={"turns": [tool_turn(("a", {"n": 1})), {"text": "ok"}]},
        tools=[recording_tool("a", log)],
        allowed_tools=["a"],
        disallowed_tools=["a"],
    )
    assert log == []
    (a,) = (m.tool_result for m in tool_messages(result.messages))
    assert a is not None
    assert a.content == "permission denied: tool 'a' is disallowed"


# --- can_use_tool answers ----------------------------------------------------------------------


@pytest.mark.parametrize("answer", [True, "allow"])
def test_callback_allow_answers_run_the_tool(answer: Any) -> None:
    log: list[tuple[str, int]] = []
    result = harness.run(
        "go",
        provider="mock",
        provider_opts={"turns": [tool_turn(("t", {"n": 5})), {"text": "ok"}]},
        tools=[recording_tool("t", log)],
        can_use_tool=Asker(answer),
    )
    assert result.finish_reason is FinishReason.STOP
    assert log == [("t", 5)]
    (r,) = (m.tool_result for m in tool_messages(result.messages))
    assert r is not None
    assert not r.is_error
    assert r.content == "t ran 5"


@pytest.mark.parametrize(
    ("answer", "content", "code"),
    [
        (False, "permission denied: denied by callback", "user_denied"),
        ("deny", "permission denied: denied by callback", "user_denied"),
        (Deny("not on a Tuesday"), "permission denied: not on a Tuesday", "user_denied"),
        (
            42,
            "permission denied: can_use_tool returned an unsupported value 42",
            "unknown",
        ),
        (
            "yes please",
            "permission denied: can_use_tool returned an unsupported value 'yes please'",
            "unknown",
        ),
    ],
)
def test_callback_deny_answers_become_error_results(answer: Any, content: str, code: str) -> None:
    log: list[tuple[str, int]] = []
    seen, hooks = denial_codes()
    result = harness.run(
        "go",
        provider="mock",
        provider_opts={"turns": [tool_turn(("t", {"n": 5})), {"text": "ok"}]},
        tools=[recording_tool("t", log)],
        can_use_tool=Asker(answer),
        hooks=hooks,
    )
    assert result.finish_reason is FinishReason.STOP
    assert log == []
    (r,) = (m.tool_result for m in tool_messages(result.messages))
    assert r is not None
    assert r.is_error
    assert r.content == content
    assert [p["code"] for p in seen] == [code]


def test_callback_halt_run_ends_the_run_with_its_reason() -> None:
    log: list[tuple[str, int]] = []
    p = MockProvider([tool_turn(("t", {"n": 1}), ("u", {"n": 2})), {"text": "never"}])
    result = harness.run(
        "go",
        provider=p,
        tools=[recording_tool("t", log), recording_tool("u", log)],
        can_use_tool=Asker(HaltRun("operator said stop")),
    )
    assert result.finish_reason is FinishReason.ERROR_HALTED
    assert result.halted_reason == "operator said stop"
    assert log == []
    assert len(p.requests) == 1
    assert tool_messages(result.messages) == []


def test_callback_halt_string_ends_the_run_naming_the_tool() -> None:
    log: list[tuple[str, int]] = []
    result = harness.run(
        "go",
        provider="mock",
        provider_opts={"turns": [tool_turn(("t", {"n": 1})), {"text": "never"}]},
        tools=[recording_tool("t", log)],
        can_use_tool=Asker("halt"),
    )
    assert result.finish_reason is FinishReason.ERROR_HALTED
    assert result.halted_reason == "can_use_tool halted the run at tool 't'"
    assert log == []


def test_callback_that_raises_halts_the_run() -> None:
    log: list[tuple[str, int]] = []

    def boom(name: str, args: dict[str, Any], ctx: Any) -> bool:
        raise RuntimeError("callback exploded")

    result = harness.run(
        "go",
        provider="mock",
        provider_opts={"turns": [tool_turn(("t", {"n": 1})), {"text": "never"}]},
        tools=[recording_tool("t", log)],
        can_use_tool=boom,
    )
    assert result.finish_reason is FinishReason.ERROR_HALTED
    assert result.halted_reason == "can_use_tool crashed: RuntimeError: callback exploded"
    assert log == []


async def test_async_callback_is_awaited() -> None:
    log: list[tuple[str, int]] = []
    asked: list[str] = []

    async def decide(name: str, args: dict[str, Any], ctx: Any) -> Any:
        asked.append(name)
        return True if name == "ok" else Deny(f"{name} is async-denied")

    result = await harness.arun(
        "go",
        provider="mock",
        provider_opts={"turns": [tool_turn(("ok", {"n": 1}), ("no", {"n": 2})), {"text": "k"}]},
        tools=[recording_tool("ok", log), recording_tool("no", log)],
        can_use_tool=decide,
    )
    assert asked == ["ok", "no"]
    assert log == [("ok", 1)]
    ok, no = (m.tool_result for m in tool_messages(result.messages))
    assert ok is not None
    assert not ok.is_error
    assert no is not None
    assert no.is_error
    assert no.content == "permission denied: no is async-denied"


async def test_async_callback_that_raises_halts_the_run() -> None:
    async def decide(name: str, args: dict[str, Any], ctx: Any) -> Any:
        raise ValueError("async boom")

    log: list[tuple[str, int]] = []
    result = await harness.arun(
        "go",
        provider="mock",
        provider_opts={"turns": [tool_turn(("t", {"n": 1})), {"text": "never"}]},
        tools=[recording_tool("t", log)],
        can_use_tool=decide,
    )
    assert result.finish_reason is FinishReason.ERROR_HALTED
    assert result.halted_reason == "can_use_tool crashed: ValueError: async boom"
    assert log == []


# --- what a denial does to the run -------------------------------------------------------------


def test_denial_is_visible_to_the_model_in_the_next_request() -> None:
    log: list[tuple[str, int]] = []
    p = MockProvider([tool_turn(("t", {"n": 1})), {"text": "understood"}])
    result = harness.run(
        "go", provider=p, tools=[recording_tool("t", log)], can_use_tool=Asker(Deny("nope"))
    )
    assert result.finish_reason is FinishReason.STOP
    assert result.text == "understood"
    assert len(p.requests) == 2
    first, second = p.requests
    assert len(first.messages) == 1
    last = second.messages[-1]
    assert last.role == "tool"
    assert last.tool_result is not None
    assert last.tool_result.is_error
    assert last.content == "permission denied: nope"
    call = second.messages[-2].tool_calls
    assert call is not None
    assert last.tool_result.tool_call_id == call[0].id


def test_three_denied_turns_end_with_consecutive_mistakes() -> None:
    log: list[tuple[str, int]] = []
    p = MockProvider(
        [
            tool_turn(("t", {"n": 1})),
            tool_turn(("t", {"n": 2})),
            tool_turn(("t", {"n": 3})),
            {"text": "never reached"},
        ]
    )
    result = harness.run(
        "go", provider=p, tools=[recording_tool("t", log)], can_use_tool=Asker(False)
    )
    assert result.finish_reason is FinishReason.ERROR_CONSECUTIVE_MISTAKES
    assert result.iterations == 3
    assert len(p.requests) == 3
    assert log == []
    assert result.tool_calls_made == 3


def test_a_successful_call_between_denials_resets_the_mistake_count() -> None:
    log: list[tuple[str, int]] = []

    def only_ok(name: str, args: dict[str, Any], ctx: Any) -> bool:
        return name == "ok"

    p = MockProvider(
        [
            tool_turn(("t", {"n": 1})),
            tool_turn(("t", {"n": 2})),
            tool_turn(("ok", {"n": 0})),
            tool_turn(("t", {"n": 3})),
            tool_turn(("t", {"n": 4})),
            {"text": "fine"},
        ]
    )
    result = harness.run(
        "go",
        provider=p,
        tools=[recording_tool("t", log), recording_tool("ok", log)],
        can_use_tool=only_ok,
    )
    assert result.finish_reason is FinishReason.STOP
    assert result.iterations == 5
    assert log == [("ok", 0)]
