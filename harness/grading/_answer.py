"""What a run answered: the text that text graders read.

The answer of a run that ended ``stop`` is its final assistant reply, the one that ended it (even
when empty: an earlier reply is not the answer). Otherwise it is the last assistant text of the
main conversation that is neither a Plan-and-Solve plan nor a Reflexion critique; text graders
read that only for a run that submitted, or with ``grade_on_error``.
"""

from __future__ import annotations

from harness.core._result import Result
from harness.core._terminations import FinishReason

__all__ = ["final_answer", "turn_marks"]


def final_answer(result: Result) -> str:
    """The run's final answer (see the module docstring); "" when there is none."""
    messages = result.messages
    if result.finish_reason is FinishReason.STOP and messages and messages[-1].role == "assistant":
        return messages[-1].content
    skip = _plan_and_critiques(result)
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if message.role == "assistant" and i not in skip and message.content.strip():
            return message.content
    return ""


def turn_marks(result: Result) -> dict[int, str]:
    """The assistant turns that are not answers, by message index: ``plan`` (Plan-and-Solve's
    first, tool-less turn) or ``critique`` (a reply to the reflection prompt)."""
    skip = _plan_and_critiques(result)
    first = next((i for i, m in enumerate(result.messages) if m.role == "assistant"), None)
    return {
        i: "plan" if result.mode == "plan_and_solve" and i == first else "critique"
        for i in sorted(skip)
    }


def _plan_and_critiques(result: Result) -> set[int]:
    """Indexes of the assistant messages that are a plan or a critique, not an answer: the
    tool-less first assistant turn of Plan-and-Solve, and every reply to the reflection prompt."""
    from harness.modes._reflexion import REFLECTION_PROMPT

    skip: set[int] = set()
    messages = result.messages
    if result.mode == "plan_and_solve":
        first = next((i for i, m in enumerate(messages) if m.role == "assistant"), None)
        if first is not None and not messages[first].tool_calls:
            skip.add(first)
    prompt = REFLECTION_PROMPT.strip()
    for i in range(1, len(messages)):
        before = messages[i - 1]
        if (
            messages[i].role == "assistant"
            and before.role == "user"
            and before.content.strip() == prompt
        ):
            skip.add(i)
    return skip
