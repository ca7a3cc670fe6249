"""Context compaction (port of ``ExAthena.Compactor.Pipeline``, the cheap stages plus summary).

Proactive: before each iteration, when the estimated prompt reaches ``compact_at`` (default 60%)
of the context window, stages run in order until the estimate is back under that threshold.
Reactive: when a provider reports ``context_length_exceeded``, every stage runs (forced), then the
iteration is retried once.

Stages:
- ``clear_oversized``: a tool result longer than 16,000 chars is replaced by a short placeholder;
- ``snip``: tool results at least 4 messages older than the last assistant message, outside the
  first message and the last 6, are replaced by a stub;
- ``summary``: the middle of the conversation (between the first message and the last 6) becomes
  one assistant summary written by the model (a provider call with purpose ``compact``).

Pinned messages (``Message.pin``) are never touched.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from harness.core._messages import Message, ToolResult
from harness.errors import CompactionError
from harness.events import Compaction
from harness.kernel._calls import build_request, call_provider
from harness.kernel._hooks import HookEvent

if TYPE_CHECKING:
    from harness.kernel._state import State

__all__ = ["CompactionError", "compact", "estimate_tokens", "maybe_compact"]

DEFAULT_CONTEXT_WINDOW = 128_000
MAX_TOOL_RESULT_CHARS = 16_000
SNIP_AGE = 4
PINNED_PREFIX = 1
LIVE_SUFFIX = 6

_SUMMARY_SYSTEM = (
    "You condense agent transcripts. Write one terse paragraph that keeps the decisions made, "
    "the facts the tools returned (numbers, names, paths) and what is still open. No preamble."
)


def estimate_tokens(messages: Sequence[Message], system_prompt: str | None = None) -> int:
    """A cheap token estimate (bytes / 4 with per-message overheads, as ExAthena does)."""
    total = len(system_prompt) // 4 if system_prompt else 0
    for m in messages:
        if m.tool_calls:
            # repr() approximates the JSON size closely and costs a fraction of json.dumps.
            total += len(m.content) // 4 + sum(
                64 + len(repr(c.arguments)) // 4 for c in m.tool_calls
            )
        elif m.tool_result is not None:
            total += 16 + len(m.content) // 4
        else:
            total += 8 + len(m.content) // 4
    return total


def _estimate(state: State) -> int:
    """estimate_tokens of the run's prompt, adding only the messages appended since last time
    (messages are only appended between compactions, which reset the cache)."""
    messages = state.messages
    count, last, tokens = state.token_estimate
    if count and len(messages) >= count and messages[count - 1] is last:
        tokens += estimate_tokens(messages[count:])
    else:
        tokens = estimate_tokens(messages, state.config.system_prompt)
    state.token_estimate = (len(messages), messages[-1] if messages else None, tokens)
    return tokens


def context_window(state: State) -> int:
    return (
        state.config.context_window or state.capabilities.context_window or DEFAULT_CONTEXT_WINDOW
    )


async def maybe_compact(state: State) -> None:
    """The proactive path; raises CompactionError when a stage fails."""
    threshold = int(state.config.compact_at * context_window(state))
    before = _estimate(state)
    if before < threshold:
        return
    await state.hooks.fire(
        HookEvent.PRE_COMPACT, {"estimate": before, "session_id": state.session_id}
    )
    event = await compact(state, reason="token_budget", target=threshold)
    await state.hooks.fire(
        HookEvent.POST_COMPACT,
        {"before": event.before_tokens, "after": event.after_tokens, "stages": list(event.stages)},
    )


async def compact(
    state: State,
    *,
    reason: Literal["token_budget", "reactive_recovery"],
    target: int | None = None,
) -> Compaction:
    """Run the stages (all of them when ``target`` is None) and emit a Compaction event."""
    system = state.config.system_prompt
    before = tokens = estimate_tokens(state.messages, system)
    applied: list[str] = []
    count_before = len(state.messages)
    for name, stage in (("clear_oversized", _clear_oversized), ("snip", _snip)):
        if target is not None and tokens < target:
            break
        try:
            changed = stage(state.messages)
        except Exception as exc:
            raise CompactionError(f"{name}: {type(exc).__name__}: {exc}") from exc
        if changed:
            applied.append(name)
            tokens = estimate_tokens(state.messages, system)
    if target is None or tokens >= target:
        try:
            changed = await _summarise(state)
        except CompactionError:
            raise
        except Exception as exc:
            raise CompactionError(f"summary: {type(exc).__name__}: {exc}") from exc
        if changed:
            applied.append("summary")
            tokens = estimate_tokens(state.messages, system)
    state.token_estimate = (0, None, 0)  # the history changed in place: estimate afresh
    event = Compaction(before, tokens, tuple(applied), reason, count_before - len(state.messages))
    state.emit(event)
    return event


def _stub(m: Message, text: str) -> Message:
    assert m.tool_result is not None
    return Message(
        "tool", text, None, ToolResult(m.tool_result.tool_call_id, text, m.tool_result.is_error)
    )


def _clear_oversized(messages: list[Message]) -> bool:
    changed = False
    for i, m in enumerate(messages):
        if m.tool_result is not None and not m.pin and len(m.content) > MAX_TOOL_RESULT_CHARS:
            messages[i] = _stub(
                m,
                f"[old output cleared to save context ({len(m.content)} chars); "
                "re-run the tool with narrower arguments if you need it]",
            )
            changed = True
    return changed


def _snip(messages: list[Message]) -> bool:
    last_assistant = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=-1)
    floor, ceiling = PINNED_PREFIX, len(messages) - LIVE_SUFFIX
    changed = False
    for i in range(floor, max(floor, ceiling)):
        m = messages[i]
        if (
            m.tool_result is not None
            and not m.pin
            and last_assistant - i >= SNIP_AGE
            and not m.content.startswith("<snipped:")
        ):
            messages[i] = _stub(
                m, f"<snipped: stale tool result for call {m.tool_result.tool_call_id}>"
            )
            changed = True
    return changed


async def _summarise(state: State) -> bool:
    messages = state.messages
    end = max(PINNED_PREFIX, len(messages) - LIVE_SUFFIX)
    while end > PINNED_PREFIX and messages[end].role == "tool":
        end -= 1  # the live suffix must not start with a tool result
    middle = messages[PINNED_PREFIX:end]
    summarisable = [m for m in middle if not m.pin]
    if len(summarisable) < 3:
        return False
    transcript = "\n".join(_line(m) for m in summarisable)
    request = build_request(
        state,
        [Message.user(f"Summarise these conversation turns:\n\n{transcript}")],
        purpose="compact",
        with_tools=False,
        system_prompt=_SUMMARY_SYSTEM,
        max_tokens=512,
    )
    response, _ = await call_provider(state, request)
    summary = Message.assistant(
        f"[summary of earlier turns] {response.text.strip()}", name="compactor_summary"
    )
    pinned = [m for m in middle if m.pin]
    state.messages[PINNED_PREFIX:end] = [summary, *pinned]
    return True


def _line(m: Message) -> str:
    if m.tool_result is not None:
        return f"[tool result] {m.content[:500]}"
    calls = f" [calls: {', '.join(c.name for c in m.tool_calls)}]" if m.tool_calls else ""
    return f"[{m.role}] {m.content[:1000]}{calls}"
