"""A task's scripted reviewer (``approvals:``): answer a run's ``interrupt_before`` pauses with
the task's decisions, in order, and keep a record of each decision apart from the model's call.

The kernel runs an edited call with the reviewer's arguments (and its transcript shows those);
what the model proposed is in ``Result.turns`` and in the :class:`Review` records made here, so
graders credit the model's proposal and the stored transcript shows the proposal and the decision
as separate entries. Used by the bench runner and by ``harness suites audit`` alike.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from harness.api import adiscard, aresume
from harness.core._result import Result
from harness.core._terminations import FinishReason
from harness.suites._suite import Task

__all__ = ["Review", "apply_approvals"]


@dataclass(frozen=True, slots=True)
class Review:
    """One scripted decision on a paused call: the call as the model proposed it, and what
    the reviewer decided (``approve``, ``deny`` or ``{"edit": {...arguments}}``)."""

    call_id: str
    name: str
    proposed: dict[str, Any]
    decision: Any

    def as_entry(self) -> dict[str, Any]:
        """The transcript entry of this decision (see :mod:`harness.store._transcript`)."""
        edit = self.decision.get("edit") if isinstance(self.decision, dict) else None
        if edit is not None:
            what = "edited"
        else:
            what = "approved" if self.decision == "approve" else "denied"
        return {
            "tool_call_id": self.call_id,
            "name": self.name,
            "decision": what,
            "proposed": self.proposed,
            "arguments": edit,
        }


async def apply_approvals(
    task: Task, result: Result, reviews: list[Review] | None = None
) -> Result:
    """Answer ``interrupt_before`` pauses with the task's scripted ``approvals``, in order; a
    pause with none left stays ``interrupted`` (the run is released). Each decision taken is
    appended to ``reviews`` (when given) with the call as the model proposed it."""
    approvals = list(task.approvals)
    while result.finish_reason is FinishReason.INTERRUPTED and result.pending_tool_calls:
        pending = result.pending_tool_calls
        if len(approvals) < len(pending):
            await adiscard(result)
            return result
        decisions = {call.id: approvals.pop(0) for call in pending}
        if reviews is not None:
            reviews.extend(
                Review(c.id, c.name, copy.deepcopy(dict(c.arguments)), decisions[c.id])
                for c in pending
            )
        result = await aresume(result, decisions=decisions)
    return result
