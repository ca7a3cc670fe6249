"""Tool calls a model wrote as bare JSON instead of its chat format's markup.

A native-calls server turns a reply into ``tool_calls`` only when the model writes its chat
format's markup (Qwen's ``<tool_call>...</tool_call>`` tags); a small model may write the same
call object without it, as the reply's whole content::

    {"name": "read_file", "arguments": {"path": "hop1.txt"}}

or inside one fenced ``json`` block. With a profile's ``bare_json_calls = true``, such a reply
is read as the call(s) it spells, but only when (1) the whole reply is that JSON (an object or a
list of objects, optionally in a single fence, nothing else around it), (2) every object has
exactly the keys ``name`` and ``arguments`` (``parameters`` is accepted as its alias), (3) each
name is a tool the request offered and each arguments value is an object. Anything else stays
text. Every repaired reply is marked (``Response.repaired``), counted per call in
``Result.calls[].repaired`` and in reports, so a reader can tell a tagged call from a repaired
one.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Collection
from typing import Any

from harness.core._messages import ToolCall

__all__ = ["parse_bare_calls"]

_FENCE = re.compile(r"\A```(?:json)?[ \t]*\n(?P<body>.*)\n```\Z", re.DOTALL)


def parse_bare_calls(text: str, offered: Collection[str]) -> list[ToolCall] | None:
    """The calls ``text`` spells as bare JSON, or None when it is not exactly that."""
    body = text.strip()
    if match := _FENCE.match(body):
        body = match.group("body").strip()
    if not body.startswith(("{", "[")):
        return None
    try:
        data: Any = json.loads(body)
    except (ValueError, RecursionError):
        return None
    items = data if isinstance(data, list) else [data]
    if not items:
        return None
    stem = hashlib.sha1(body.encode()).hexdigest()[:10]  # stable: replays send the same ids
    calls: list[ToolCall] = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            return None
        keys = set(item)
        args_key = "arguments" if "arguments" in keys else "parameters"
        if keys != {"name", args_key}:
            return None
        name, arguments = item["name"], item[args_key]
        if not isinstance(name, str) or name not in offered or not isinstance(arguments, dict):
            return None
        calls.append(ToolCall(id=f"call_{stem}_{i}", name=name, arguments=arguments))
    return calls
