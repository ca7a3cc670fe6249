"""Orchestrate (ExAthena HEAD's A4.4): a supervisor that plans a todo list, delegates each item
to a ``spawn_agent`` worker, integrates their reports and finishes.

- The supervisor's tools are ``todo_write``, ``spawn_agent`` and ``finish``; the run's other
  tools go to the workers (``State.subagent_tools``), with a worker contract as their system
  prompt. The supervisor's system prompt gets the orchestration protocol.
- **Planning**: ReAct turns with an ephemeral phase note. Planning ends with a successful
  ``todo_write`` (or with a worker spawned directly). A ``finish`` or a bare answer before any
  plan is redirected once; after ``nudge_planning_after`` (4) planning turns the note presses
  for the list; after ``auto_delegate_after`` (6) the whole task becomes one delegated todo.
- **Executing**: the note recites the todo list. The watchdog delegates the first pending todo
  itself after ``max_turns_without_spawn`` (2) supervisor turns without a spawn. A successful
  ``spawn_agent`` call with ``todo: N`` marks item N completed. A bare answer, or a ``finish``,
  while todos are pending is nudged once; the second is honoured.
- Productivity: ReAct's strict check, and a turn the watchdog delegated counts as progress.

Not ported: ExAthena's evidence gates on ``finish`` (provenance of the workers' tool calls:
nothing acted / no test / changed code not covered / requirements audit), ``ask_user``, the
``max_iterations = infinity`` default (the run's ``max_iterations`` applies to supervisor
turns) and the request-queue cap on concurrency (``max_concurrency`` applies).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, ClassVar

from harness.core._messages import Message, ToolResult
from harness.core._terminations import FinishReason
from harness.errors import ToolError
from harness.kernel._progress import ProgressSnapshot
from harness.kernel._state import Continue, Halt, State
from harness.kernel._subagents import run_subagent
from harness.modes._react import ReAct
from harness.providers._base import ToolSpec
from harness.tools._builtins import FinishTool
from harness.tools._subagent import SpawnAgentTool
from harness.tools._todos import TodoWriteTool, render_todos

if TYPE_CHECKING:
    from harness.tools._base import Tool

__all__ = ["ORCHESTRATION_PROTOCOL", "WORKER_CONTRACT", "Orchestrate"]

SUPERVISOR_TOOLS = ("todo_write", "spawn_agent", "finish")

ORCHESTRATION_PROTOCOL = """

# You coordinate; helpers do the work
You cannot use the work tools yourself: helpers started with spawn_agent can. Work like this:
1. Plan: split the task into steps that can each be done alone, and record them with
   todo_write. Write each step as a complete brief: a helper sees only its brief.
2. Delegate: start a helper per pending step with spawn_agent (prompt = the brief, todo = the
   step's number). Independent steps can be delegated in the same reply.
3. Integrate: read the helpers' reports. Delegate again a step that failed, with a clearer
   brief.
4. Finish: when every step is done, call finish with the complete answer as the deliverable."""

WORKER_CONTRACT = """You are a helper doing one step of a larger task for a coordinator.
Do exactly the step you are given, using your tools; do not start other work. When you are
done, reply with a short report: what you did and the result, with exact values and file
names. If you could not do it, say what stopped you."""

_PLANNING_NOTE = (
    "[orchestrator] Planning: record the steps with todo_write now. Do not answer the task "
    "yourself."
)
_PLANNING_PRESS = (
    "[orchestrator] You have spent {n} turns planning. Call todo_write with the steps in this "
    "reply."
)


class Orchestrate:
    """Plan, delegate to ``spawn_agent`` workers, integrate, finish (see the module docs)."""

    #: The harness's own code: the kernel awaits it directly (kernel._isolated.owned).
    _harness_owned: ClassVar[bool] = True

    name = "orchestrate"
    #: Follow-up user turns are refused (ConfigError): the supervisor's plan, todo list and
    #: watchdog describe one task.
    supports_turns = False

    def __init__(
        self,
        *,
        max_turns_without_spawn: int = 2,
        nudge_planning_after: int = 4,
        auto_delegate_after: int = 6,
    ) -> None:
        self.max_turns_without_spawn = max_turns_without_spawn
        self.nudge_planning_after = nudge_planning_after
        self.auto_delegate_after = auto_delegate_after
        self._react = ReAct()

    def init(self, state: State) -> None:
        given = state.tools
        workers = {n: t for n, t in given.items() if n not in ("spawn_agent", "todo_write")}
        made: dict[str, Tool] = {
            "todo_write": TodoWriteTool(),
            "spawn_agent": SpawnAgentTool(),
            "finish": FinishTool(),
        }
        state.tools = {n: given.get(n, made[n]) for n in SUPERVISOR_TOOLS}
        state.tool_specs = [
            ToolSpec(t.name, t.description, t.parameters) for t in state.tools.values()
        ]
        state.subagent_tools = workers
        base = state.config.system_prompt
        state.subagent_system_prompt = f"{base}\n\n{WORKER_CONTRACT}" if base else WORKER_CONTRACT
        state.system_suffix = ORCHESTRATION_PROTOCOL
        task = next((m.content for m in state.messages if m.role == "user"), "")
        state.mode_state = {
            "phase": "planning",
            "task": task,
            "planning_turns": 0,
            "since_spawn": 0,
            "redirected": False,
            "nudged": False,
            "auto": False,
            "auto_count": 0,
        }

    async def iterate(self, state: State) -> Continue | Halt:
        ms = state.mode_state
        ms["auto"] = False
        todos = _todos(state)
        pending = [i for i, t in enumerate(todos) if t["status"] != "completed"]
        if ms["phase"] == "planning":
            ms["planning_turns"] += 1
            if ms["planning_turns"] > self.auto_delegate_after:
                if not todos:
                    state.ctx.assigns["todos"] = [{"content": ms["task"], "status": "pending"}]
                ms["phase"] = "executing"
                return await self._auto_delegate(state, 0)
            press = ms["planning_turns"] > self.nudge_planning_after
            state.phase_note = (
                _PLANNING_PRESS.format(n=ms["planning_turns"] - 1) if press else _PLANNING_NOTE
            )
        else:
            if pending and ms["since_spawn"] >= self.max_turns_without_spawn:
                return await self._auto_delegate(state, pending[0])
            state.phase_note = "[orchestrator] The todo list:\n" + render_todos(todos)
        before = len(state.messages)
        try:
            outcome = await self._react.iterate(state)
        finally:
            state.phase_note = None
        spawned, wrote = _account(state, state.messages[before:])
        if ms["phase"] == "planning":  # the watchdog counts executing turns only
            if wrote or spawned:
                ms["phase"] = "executing"
        else:
            ms["since_spawn"] = 0 if spawned else ms["since_spawn"] + 1
        if isinstance(outcome, Halt):
            return self._maybe_redirect(state, outcome)
        return outcome

    def _maybe_redirect(self, state: State, outcome: Halt) -> Continue | Halt:
        """A premature finish or answer is sent back once (with the reason), as in ExAthena."""
        ms = state.mode_state
        reason = state.finish_reason
        if reason not in (FinishReason.STOP, FinishReason.SUBMITTED):
            return outcome
        todos = _todos(state)
        pending = [t for t in todos if t["status"] != "completed"]
        if not todos and not ms["redirected"]:
            ms["redirected"] = True
            note = (
                "Not yet: there is no plan. Record the steps with todo_write and delegate them "
                "with spawn_agent; finish after the helpers have reported."
            )
        elif pending and not ms["nudged"]:
            ms["nudged"] = True
            note = (
                f"Not yet: {len(pending)} step(s) are not completed:\n{render_todos(todos)}\n"
                "Delegate them with spawn_agent (todo = the number), or mark them completed "
                "with todo_write if they are done or not needed, then finish."
            )
        else:
            return outcome
        _reopen(state, note)
        return Continue()

    async def _auto_delegate(self, state: State, index: int) -> Continue:
        ms = state.mode_state
        ms["auto"] = True
        ms["since_spawn"] = 0
        ms["auto_count"] += 1
        todos = _todos(state)
        content = todos[index]["content"]
        brief = f"Overall task, for context:\n{ms['task']}\n\nYour step:\n{content}"
        ctx = dataclasses.replace(state.ctx, tool_call_id=f"orchestrator-{ms['auto_count']}")
        try:
            report = (await run_subagent(state, {"prompt": brief}, ctx)).content
            _complete(state, index)
        except ToolError as exc:
            report = f"error: {exc}"
        state.messages.append(
            Message.user(
                f"[orchestrator] No helper was started for a while, so step {index + 1} "
                f"({content!r}) was delegated automatically. The helper reported:\n{report}"
            )
        )
        return Continue()

    def productivity_signal(self, prev: ProgressSnapshot, state: State) -> bool:
        if state.mode_state["auto"]:
            return True
        return self._react.productivity_signal(prev, state)


def _todos(state: State) -> list[dict[str, Any]]:
    todos = state.ctx.assigns.get("todos")
    return todos if isinstance(todos, list) else []


def _complete(state: State, index: int) -> None:
    todos = [dict(t) for t in _todos(state)]
    if 0 <= index < len(todos):
        todos[index]["status"] = "completed"
        state.ctx.assigns["todos"] = todos


def _account(state: State, new: list[Message]) -> tuple[bool, bool]:
    """Whether this turn spawned a worker and wrote the todo list (successfully), marking the
    todos that a successful ``spawn_agent(todo=N)`` call delegated as completed."""
    results = {m.tool_result.tool_call_id: m.tool_result for m in new if m.tool_result}
    spawned = wrote = False
    for m in new:
        for call in m.tool_calls or ():
            result = results.get(call.id)
            if result is None or result.is_error:
                continue
            if call.name == "todo_write":
                wrote = True
            elif call.name == "spawn_agent":
                spawned = True
                todo = call.arguments.get("todo")
                if isinstance(todo, int):
                    _complete(state, todo - 1)
    return spawned, wrote


def _reopen(state: State, note: str) -> None:
    """Undo a halt: answer every call of the last turn that has no result (a refused finish,
    calls that never ran) and tell the model why, so the transcript stays well formed."""
    state.finish_reason = None
    state.halted_reason = None
    state.submitted = False
    state.deliverable = None
    last = next((m for m in reversed(state.messages) if m.role == "assistant"), None)
    answered = {m.tool_result.tool_call_id for m in state.messages if m.tool_result}
    calls = [c for c in (last.tool_calls or ()) if c.id not in answered] if last else []
    for call in calls:
        text = f"not accepted: {note}" if call.name == "finish" else "not run: the turn ended"
        state.messages.append(Message.tool(ToolResult(call.id, text, True)))
    if not calls:
        state.messages.append(Message.user(f"[orchestrator] {note}"))
