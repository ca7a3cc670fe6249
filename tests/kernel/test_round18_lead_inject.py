"""A hook's ``Inject`` given one message alone rather than a list (round 18, the lead):
``Inject("note")`` was iterated as a sequence, so each character became a user message of its
own (five messages for ``"hello"``), and ``Inject({"role": "user", "content": ...})`` injected
the dict's keys (``"role"``, ``"content"``) as two messages, silently. One text, message or
mapping is one message now; bytes are the hook's crash, named."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import answered

from harness import Inject, Message


def _users(result: Any) -> list[str]:
    return [m.content for m in result.messages if m.role == "user"]


@pytest.mark.parametrize(
    "alone",
    ["hello", {"role": "user", "content": "hello"}, Message.user("hello")],
    ids=["str", "dict", "Message"],
)
def test_one_message_given_alone_is_injected_as_one_message(alone: Any) -> None:
    result = answered("UserPromptSubmit", lambda: Inject(alone))
    assert result.halted_reason is None, result.halted_reason
    assert _users(result)[:2] == ["hi", "hello"], _users(result)


def test_a_list_of_messages_is_injected_as_before() -> None:
    result = answered("UserPromptSubmit", lambda: Inject(["a", "b"]))
    assert _users(result)[:3] == ["hi", "a", "b"], _users(result)


def test_bytes_are_the_hooks_crash_named() -> None:
    result = answered("UserPromptSubmit", lambda: Inject(b"hello"))  # type: ignore[arg-type]
    assert result.halted_reason == (
        "hook_crashed: UserPromptSubmit: Inject's messages is b'hello', not a list of messages"
    )
