"""Tool calls written as text, for models without native tool calling (``tool_calls = "text"``).

:class:`~harness.providers._chat.ChatProvider` uses this module in two steps:

- :func:`prepare_request` turns a request with tools into one a text-only model can follow: no
  ``tools`` field, a system prompt that describes the calling protocol and lists the tools with
  their JSON schemas, and a history without tool roles (earlier calls are written back into the
  assistant turns as the same fenced blocks, results become user messages).
- :func:`finish_response` reads the calls back out of the reply with
  :func:`~harness.providers._text_tool_parse.parse_tool_calls`.

The protocol asks for one fenced block per call::

    ```tool_call
    {"name": "calculator", "arguments": {"expression": "17*23"}}
    ```

Parsing is more lenient than the prompt, because small models drift: the accepted forms and the
errors are described in :mod:`harness.providers._text_tool_parse`.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from harness.core._messages import Message, ToolCall, ToolResult
from harness.providers._base import Request, Response, ToolSpec
from harness.providers._text_tool_parse import parse_reply

__all__ = [
    "NEXT_TURN",
    "TextFormat",
    "drop_run_on",
    "example_messages",
    "finish_response",
    "prepare_request",
    "render_tool_prompt",
    "rewrite_history",
]


_LINE_CLOSE = "</tool_call>"
#: The closing tag in any case. (``text.lower().find(...)`` gave a place in the lowered text,
#: longer than the reply where it holds ``İ``: each one kept a character of the run-on.)
_LINE_CLOSE_ANY_CASE = re.compile(re.escape(_LINE_CLOSE), re.IGNORECASE)

#: The user turn written between two assistant turns, and after a history that ends with one (a
#: Plan-and-Solve plan, a Reflexion critique). On a chat API a trailing assistant message is a
#: prefill (Anthropic messages continue it; templates that need alternating turns reject two in
#: a row), while the kernel means the model's next turn: this makes that turn explicit.
NEXT_TURN = "Continue with the task."

#: How calls are written: fenced ``tool_call`` blocks, or one ``<tool_call>...</tool_call>`` line.
TextFormat = Literal["fenced", "line"]


# --- the request side ---------------------------------------------------------------------------


def prepare_request(
    request: Request,
    *,
    fmt: TextFormat = "fenced",
    examples: Sequence[list[Message]] = (),
) -> Request:
    """A copy of ``request`` for a model that reads tools from the prompt (the input is unchanged).

    Tools and ``tool_choice`` move into the system prompt; the history is rewritten without tool
    roles (see :func:`rewrite_history`), with the few-shot ``examples`` (already chosen for these
    tools) before it, written the same way.
    """
    prompt = render_tool_prompt(request.tools or [], request.tool_choice, fmt=fmt)
    system = f"{request.system_prompt.rstrip()}\n\n{prompt}" if request.system_prompt else prompt
    shots = [m for example in examples for m in example]
    messages = rewrite_history([*shots, *request.messages], fmt=fmt)
    if messages and messages[-1].role == "assistant":
        messages.append(Message("user", NEXT_TURN))
    return dataclasses.replace(
        request,
        messages=messages,
        system_prompt=system,
        tools=None,
        tool_choice=None,
        stop=list(request.stop) if request.stop is not None else None,
        provider_opts=dict(request.provider_opts),
        metadata=dict(request.metadata),
    )


def render_tool_prompt(
    tools: Iterable[ToolSpec],
    tool_choice: str | dict[str, Any] | None,
    *,
    fmt: TextFormat = "fenced",
) -> str:
    """The system-prompt section that explains the calling protocol and lists ``tools``."""
    if fmt == "line":
        return _render_line_prompt(tools, tool_choice)
    lines = [
        "# Calling tools",
        "",
        "You can use the tools listed below. To call one, write a fenced code block tagged "
        "`tool_call` that holds a single JSON object with the tool's name and its arguments:",
        "",
        "```tool_call",
        '{"name": "TOOL_NAME", "arguments": {"PARAMETER": "VALUE"}}',
        "```",
        "",
        "- Write one block per call. To make several calls at once, write several blocks.",
        '- "arguments" is a JSON object that follows the tool\'s parameter schema '
        "(`{}` when the tool takes no parameters).",
        "- After your blocks, end your reply. Each result comes back in the next message, headed "
        '"Result of tool call NAME (ID)".',
        "- When you need no more tools, answer in plain text with no tool_call block. That reply "
        "is your final answer.",
    ]
    choice = _choice_rule(tool_choice)
    if choice:
        lines.append(f"- {choice}")
    lines += ["", "## Available tools"]
    for spec in tools:
        lines += [
            "",
            f"### {spec.name}",
            spec.description.strip() or "(no description)",
            f"Parameters (JSON schema): {json.dumps(spec.parameters, ensure_ascii=False)}",
        ]
    return "\n".join(lines)


def _render_line_prompt(tools: Iterable[ToolSpec], tool_choice: str | dict[str, Any] | None) -> str:
    """The one-line protocol: a call is a single line, so a server can stop at the newline."""
    lines = [
        "You can call tools. To call one, reply with exactly one line and nothing else:",
        '<tool_call>{"name": "TOOL_NAME", "arguments": {"PARAMETER": "VALUE"}}</tool_call>',
        "The result comes back in the next message. When you know the answer, reply with the "
        "answer alone on one line, with no tool_call.",
    ]
    choice = _choice_rule(tool_choice)
    if choice:
        lines.append(choice)
    lines += ["", "Tools:"]
    for spec in tools:
        params = ", ".join(
            f"{name} ({(schema or {}).get('type', 'any')})"
            for name, schema in (spec.parameters.get("properties") or {}).items()
        )
        summary = " ".join(spec.description.split())
        lines.append(f"- {spec.name}({params}): {summary or '(no description)'}")
    return "\n".join(lines)


def _choice_rule(tool_choice: str | dict[str, Any] | None) -> str | None:
    """``tool_choice`` as an instruction (OpenAI and Anthropic spellings)."""
    if tool_choice is None or tool_choice == "auto":
        return None
    if tool_choice == "none":
        return "In this reply, do not call any tool; answer in plain text."
    if tool_choice in ("required", "any"):
        return "In this reply, you must call at least one tool."
    name: Any = tool_choice
    if isinstance(tool_choice, dict):
        function = tool_choice.get("function")
        name = function.get("name") if isinstance(function, dict) else tool_choice.get("name")
        if name is None and tool_choice.get("type") in ("required", "any"):
            return "In this reply, you must call at least one tool."
    if isinstance(name, str) and name:
        return f"In this reply, you must call the tool `{name}`."
    return None


def rewrite_history(messages: list[Message], *, fmt: TextFormat = "fenced") -> list[Message]:
    """``messages`` without tool roles, for a model that only reads text.

    An assistant turn's tool calls are appended to its content as ``tool_call`` blocks. A tool
    result becomes a user message ``Result of tool call NAME (ID):`` followed by the content, with
    ``[error]`` before the colon for a failed call. Results that follow each other (and a user
    message right after them) are merged into one user message, since some chat templates
    require user and assistant turns to alternate; for the same reason two assistant turns in a
    row get a :data:`NEXT_TURN` user message between them.
    """
    out: list[Message] = []
    merged: dict[
        int, list[str]
    ] = {}  # the texts merged into a user message, joined once at the end
    names: dict[str, str] = {}
    merge_next = False  # the last message in ``out`` holds tool results
    for message in messages:
        if message.role == "assistant" and out and out[-1].role == "assistant":
            out.append(Message("user", NEXT_TURN))
        if message.role == "assistant" and message.tool_calls:
            blocks = [_render_call(call, fmt) for call in message.tool_calls]
            names.update((call.id, call.name) for call in message.tool_calls)
            sep = "\n" if fmt == "line" else "\n\n"
            content = sep.join([message.content.rstrip(), *blocks]).lstrip("\n")
            out.append(dataclasses.replace(message, content=content, tool_calls=None))
            merge_next = False
        elif message.role == "tool":
            result = message.tool_result
            call_id = result.tool_call_id if result is not None else ""
            name = names.get(call_id) or message.name or "tool"
            mark = " [error]" if result is not None and result.is_error else ""
            body = message.content or (result.content if result is not None else "")
            text = f"Result of tool call {name} ({call_id}){mark}:\n{body.rstrip()}"
            if merge_next or (out and out[-1].role == "user"):
                merged.setdefault(len(out) - 1, [out[-1].content]).append(text)
            else:
                out.append(Message("user", text, pin=message.pin))
            merge_next = True
        elif message.role == "user" and merge_next:
            merged.setdefault(len(out) - 1, [out[-1].content]).append(message.content)
            merge_next = False
        else:
            out.append(message)
            merge_next = False
    for at, texts in merged.items():
        out[at] = dataclasses.replace(out[at], content=_joined(texts), tool_calls=None,
                                      tool_result=None)  # fmt: skip
    return out


def _joined(texts: list[str]) -> str:
    """``texts`` merged as one message, each after a blank line once the message holds text.
    (Appended one at a time, a reply of 20,000 calls took 6.8 s at each later request: each
    result copied all before it; adversary round 22, part A.)"""
    first = next((i for i, text in enumerate(texts) if text), len(texts))
    return "\n\n".join(texts[first:])


def _render_call(call: ToolCall, fmt: TextFormat = "fenced") -> str:
    body = json.dumps({"name": call.name, "arguments": call.arguments}, ensure_ascii=False)
    if fmt == "line":
        return f"<tool_call>{body}</tool_call>"
    return f"```tool_call\n{body}\n```"


def example_messages(examples: Iterable[Any], tool_names: Iterable[str]) -> list[list[Message]]:
    """The few-shot conversations (profile :class:`~harness.providers._profiles.Example`) whose
    tools are all offered, as kernel messages (call ids ``example_1``...)."""
    offered = set(tool_names)
    chosen: list[list[Message]] = []
    for example in examples:
        if not set(example.tool_names()) <= offered:
            continue
        messages: list[Message] = []
        counter = 0
        pending: list[str] = []
        for raw in example.messages:
            role = raw.get("role")
            if role == "assistant" and raw.get("tool_calls"):
                calls = []
                for call in raw["tool_calls"]:
                    counter += 1
                    calls.append(
                        ToolCall(
                            f"example_{counter}", call["name"], dict(call.get("arguments") or {})
                        )
                    )
                pending = [c.id for c in calls]
                messages.append(Message("assistant", raw.get("content", ""), tool_calls=calls))
            elif role == "tool":
                call_id = pending.pop(0) if pending else f"example_{counter}"
                content = str(raw.get("content", ""))
                result = ToolResult(call_id, content, bool(raw.get("is_error", False)))
                messages.append(Message("tool", content, tool_result=result, name=raw.get("name")))
            else:
                messages.append(Message(role, str(raw.get("content", ""))))
        chosen.append(messages)
    return chosen


# --- the response side --------------------------------------------------------------------------


def drop_run_on(text: str, fmt: TextFormat) -> str:
    """``text`` cut after its first ``</tool_call>`` under the one-line protocol (else as is).

    What follows the closing tag is the model going on past its turn (a stray token, an invented
    result). It is dropped from every reply of a line-format profile, tool-less ones (a plan, a
    critique) included, so that it never reaches the history, where the model would imitate it.
    """
    if fmt != "line":
        return text
    found = _LINE_CLOSE_ANY_CASE.search(text)
    return text if found is None else text[: found.end()]


def finish_response(response: Response, fmt: TextFormat = "fenced") -> None:
    """Read text-tagged tool calls out of ``response`` (in place).

    Native calls, if the provider returned any, are kept and the text is left alone. Otherwise,
    found calls go to ``tool_calls``, the text loses their blocks, and ``finish_reason`` becomes
    ``"tool_calls"``, and any repair made to read them goes to ``tool_call_repairs``. A malformed
    or unclosed call sets ``tool_call_error`` and leaves the text as received.
    With the one-line protocol a reply holds one call: whatever follows its closing tag is a
    run-on (the model going on past its turn) and is not read.
    """
    if response.tool_calls or not response.text:
        return
    source = drop_run_on(response.text, fmt)
    parsed = parse_reply(source)
    if parsed.error is not None:
        response.tool_call_error = parsed.error
        return
    if parsed.calls:
        response.tool_calls = parsed.calls
        response.text = parsed.text
        response.finish_reason = "tool_calls"
        response.tool_call_repairs = list(parsed.repairs)
