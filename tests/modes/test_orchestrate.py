"""The orchestrate mode: plan a todo list, delegate to spawn_agent workers, integrate, finish."""

from __future__ import annotations

from typing import Any

import harness
from harness.modes._orchestrate import ORCHESTRATION_PROTOCOL, WORKER_CONTRACT
from harness.providers._mock import MockProvider


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def _turn(*calls: dict[str, Any]) -> dict[str, Any]:
    return {"tool_calls": list(calls)}


PLAN = _turn(_call("todo_write", todos=["Compute 2+3", "Compute 4*5"]))
DELEGATE = _turn(
    _call("spawn_agent", prompt="Compute 2+3 with the calculator", todo=1),
    _call("spawn_agent", prompt="Compute 4*5 with the calculator", todo=2),
)
WORKERS = [
    _turn(_call("calculator", expression="2+3")),
    {"text": "2+3 = 5"},
    _turn(_call("calculator", expression="4*5")),
    {"text": "4*5 = 20"},
]
FINISH = _turn(_call("finish", deliverable="5 and 20"))


def _run(turns: list[dict[str, Any]], **options: Any) -> tuple[harness.Result, MockProvider]:
    provider = MockProvider(turns)
    options.setdefault("tools", ["calculator"])
    result = harness.run("Compute 2+3 and 4*5.", provider=provider, mode="orchestrate", **options)
    return result, provider


def test_plan_delegate_integrate_finish() -> None:
    result, provider = _run([PLAN, DELEGATE, *WORKERS, FINISH])
    assert result.finish_reason == harness.FinishReason.SUBMITTED
    assert result.deliverable == "5 and 20"
    assert result.mode == "orchestrate"
    assert [c.purpose for c in result.calls].count("subagent") == 4
    assert [t["status"] for t in result.assigns["todos"]] == ["completed", "completed"]
    supervisor = provider.requests[0]
    assert [t.name for t in supervisor.tools or []] == ["todo_write", "spawn_agent", "finish"]
    assert (supervisor.system_prompt or "").endswith(ORCHESTRATION_PROTOCOL)
    # The phase note is sent last, never persisted.
    assert supervisor.messages[-1].content.startswith("[orchestrator] Planning")
    assert not any(m.content.startswith("[orchestrator]") for m in result.messages)
    executing = provider.requests[1].messages[-1].content
    assert "[ ] 1. Compute 2+3" in executing
    worker = provider.requests[2]
    assert worker.system_prompt == WORKER_CONTRACT
    assert [t.name for t in worker.tools or []] == ["calculator"]
    assert [m.content for m in worker.messages] == ["Compute 2+3 with the calculator"]


def test_a_finish_before_any_plan_is_redirected_once() -> None:
    result, _ = _run([FINISH, PLAN, DELEGATE, *WORKERS, FINISH])
    assert result.finish_reason == harness.FinishReason.SUBMITTED
    refused = result.messages[2]
    assert refused.tool_result is not None
    assert refused.tool_result.is_error
    assert "there is no plan" in refused.content
    # A second premature finish is honoured.
    result, _ = _run([FINISH, FINISH])
    assert result.finish_reason == harness.FinishReason.SUBMITTED
    assert result.iterations == 1


def test_an_answer_with_pending_todos_is_nudged_once() -> None:
    result, _ = _run([PLAN, {"text": "5 and 20"}, {"text": "5 and 20, really"}])
    assert result.finish_reason == harness.FinishReason.STOP
    assert result.text == "5 and 20, really"
    nudges = [m.content for m in result.messages if m.role == "user"][1:]
    assert len(nudges) == 1
    assert "2 step(s) are not completed" in nudges[0]


def test_the_watchdog_delegates_after_two_turns_without_a_spawn() -> None:
    stall = _turn(_call("todo_write", todos=["Compute 2+3", "Compute 4*5"]))
    turns = [PLAN, stall, stall, *WORKERS[:2], FINISH, FINISH]
    result, provider = _run(turns, max_unproductive_iterations=0)
    auto = [m.content for m in result.messages if m.content.startswith("[orchestrator] No helper")]
    assert len(auto) == 1
    assert "step 1 ('Compute 2+3')" in auto[0]
    assert "2+3 = 5" in auto[0]
    assert result.assigns["todos"][0]["status"] == "completed"
    # The automatic worker got the overall task for context and its step.
    brief = provider.requests[3].messages[0].content
    assert "Compute 2+3 and 4*5." in brief
    assert brief.endswith("Your step:\nCompute 2+3")
    # The next finish is nudged (step 2 pending), the second honoured.
    assert result.finish_reason == harness.FinishReason.SUBMITTED


def test_planning_that_never_produces_a_list_is_delegated_whole() -> None:
    bad = _turn(_call("todo_write", todos=[{"content": "x", "status": "bogus"}]))
    turns = [bad] * 6 + [{"text": "did it all: 5 and 20"}, {"text": "Both: 5 and 20."}]
    result, provider = _run(turns, max_consecutive_mistakes=10, max_unproductive_iterations=0)
    assert result.text == "Both: 5 and 20."
    assert result.assigns["todos"] == [{"content": "Compute 2+3 and 4*5.", "status": "completed"}]
    assert any("delegated automatically" in m.content for m in result.messages)
    press = provider.requests[5].messages[-1].content
    assert "You have spent 5 turns planning" in press


def test_orchestrate_is_a_builtin_mode_name() -> None:
    from harness.modes._base import BUILTIN_MODES, resolve_mode

    assert "orchestrate" in BUILTIN_MODES
    assert resolve_mode("orchestrate").name == "orchestrate"
