"""The pre-flight check of a live provider: does its server honour the system message?

A server can take a request, answer it, and never show the model its system message (a chat
template without a system role that drops it, as llama-cpp-python's ``--chat_format gemma``
does). Every tool list, text protocol and mode instruction of the harness travels in that
message, so a recording from such a server measures a model that never saw its instructions.

:func:`check_system_message` sends one request whose system message carries an instruction
the reply must show (start with a code word that appears nowhere else) and a known amount of
text, and checks two things:

1. **coverage**: the prompt tokens the server reports cover the system text (at least one
   token per :data:`CHARS_PER_TOKEN_MAX` characters of it; tokenisers of current models spend
   one token per 3-5 characters of English, and a server that drops the message reports only
   the user turn's few tokens);
2. **obedience**: the reply contains the code word (temperature 0, a short cap).

Either failing refuses the provider, with the reason and the figures.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from harness.core._messages import Message
from harness.errors import HarnessError, ProviderError
from harness.providers._base import Request

__all__ = ["CODE_WORD", "PreflightResult", "check_system_message", "check_system_message_sync"]

#: The word the system message orders the reply to start with; in no user text.
CODE_WORD = "MARIGOLD-731"
#: A prompt may spend at most one token per this many characters of the system text.
CHARS_PER_TOKEN_MAX = 8

_RULE = (
    f"You are a careful assistant. Rule: begin every reply with the exact code word "
    f"{CODE_WORD}, then answer the user briefly."
)
# Background text with nothing to act on, so that a dropped system message shows in the count.
_FILLER = " ".join(
    [
        "Background for this session: the reader works in a small office that keeps a garden",
        "on its roof. The garden has tomatoes, beans, basil and a lemon tree in a large pot.",
        "Staff water it in turns, write the date in a notebook, and note which plants need",
        "shade in summer. None of this needs to be mentioned unless the user asks about it.",
        "The notebook also records rainfall, the first flowers of each season, and the days",
        "when the roof door was locked for repairs. Nobody needs to summarise it today.",
    ]
)
SYSTEM_TEXT = f"{_RULE}\n\n{_FILLER}\n\n{_RULE}"
USER_TEXT = "Say hello in one short sentence."


@dataclass(frozen=True, slots=True)
class PreflightResult:
    """The outcome for one provider: ``ok``, and when not, ``reason`` says why."""

    provider: str
    ok: bool
    reason: str
    prompt_tokens: int | None
    system_chars: int
    reply: str

    def line(self) -> str:
        verdict = "ok" if self.ok else "REFUSED"
        return f"{self.provider}: pre-flight {verdict}: {self.reason}"


async def check_system_message(spec: str, *, timeout_s: float = 120.0) -> PreflightResult:
    """Probe the live provider ``spec`` (a profile name or ``NAME:MODEL``) once."""
    from harness.providers._registry import resolve_provider

    provider, model, owned = resolve_provider(spec, None, {"max_retries": 0})
    request = Request(
        messages=[Message.user(USER_TEXT)],
        model=model,
        system_prompt=SYSTEM_TEXT,
        temperature=0.0,
        max_tokens=48,
        timeout_s=timeout_s,
    )
    try:
        response = await provider.complete(request)
    except (ProviderError, HarnessError, OSError) as exc:
        return PreflightResult(spec, False, f"no answer: {exc}", None, len(SYSTEM_TEXT), "")
    finally:
        if owned:
            await provider.aclose()
    return judge(spec, response.text, response.usage.input_tokens if response.usage else None)


def judge(spec: str, reply: str, prompt_tokens: int | None) -> PreflightResult:
    """The verdict on one reply and its reported prompt tokens."""
    needed = len(SYSTEM_TEXT) // CHARS_PER_TOKEN_MAX
    shown = reply.strip().replace("\n", " ")[:80]
    if prompt_tokens is None:
        reason = "the server reported no prompt token count; cannot tell what the model saw"
        return PreflightResult(spec, False, reason, None, len(SYSTEM_TEXT), reply)
    if prompt_tokens < needed:
        reason = (
            f"the system message was not shown to the model: {prompt_tokens} prompt tokens "
            f"reported for {len(SYSTEM_TEXT)} characters of system text (at least {needed} "
            "expected); check the server's chat template"
        )
        return PreflightResult(spec, False, reason, prompt_tokens, len(SYSTEM_TEXT), reply)
    if CODE_WORD.lower() not in reply.lower():
        reason = f"the reply ignored the system message's instruction (no {CODE_WORD}): {shown!r}"
        return PreflightResult(spec, False, reason, prompt_tokens, len(SYSTEM_TEXT), reply)
    reason = f"{prompt_tokens} prompt tokens for {len(SYSTEM_TEXT)} system characters; obeyed"
    return PreflightResult(spec, True, reason, prompt_tokens, len(SYSTEM_TEXT), reply)


def check_system_message_sync(spec: str, *, timeout_s: float = 120.0) -> PreflightResult:
    """:func:`check_system_message` for callers outside an event loop."""
    return asyncio.run(check_system_message(spec, timeout_s=timeout_s))
