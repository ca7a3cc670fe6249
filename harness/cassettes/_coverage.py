"""Did the recorded server show the model its system message? Read off recorded cassettes.

The live pre-flight (harness.providers._preflight) refuses a server before it records; this is
the same token test applied after the fact, to every recorded request that carries a system
message: the prompt tokens the server reported for it must cover the system text (at least one
token per ``CHARS_PER_TOKEN_MAX`` characters). A request below that was answered by a model that
never saw (most of) its instructions. Only requests whose system text dominates are judged (at
least ``MIN_SYSTEM_CHARS`` of it, and the rest of the request at most a quarter of its size), so
that the rest of a long conversation cannot make up for a dropped system message; replies that
report no usage are not judged. Prompt tokens count what the server read from its cache too
(Anthropic's ``cache_read_input_tokens`` and ``cache_creation_input_tokens``).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.cassettes import _yaml as yamlserializer
from harness.cassettes._lint import cassette_files
from harness.providers._preflight import CHARS_PER_TOKEN_MAX

__all__ = ["MIN_SYSTEM_CHARS", "Coverage", "system_coverage"]

#: Shorter system texts are not judged (a few words can tokenise densely).
MIN_SYSTEM_CHARS = 200


@dataclass
class Coverage:
    """Per provider folder (``cassettes/<suite>/<provider>/...``): requests judged and short."""

    judged: Counter[str] = field(default_factory=Counter)
    short: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)

    def lines(self) -> dict[str, str]:
        """One line per provider, by provider."""
        out = {}
        for provider in sorted(self.judged):
            n, bad = self.judged[provider], self.short[provider]
            verdict = "system message NOT shown" if bad else "ok"
            line = f"{provider}: {bad} of {n} requests with a system message report fewer prompt "
            line += f"tokens than its text needs: {verdict}"
            if provider in self.examples:
                line += f" (e.g. {self.examples[provider]})"
            out[provider] = line
        return out


def system_coverage(directory: str | Path) -> Coverage:
    """Check every cassette under ``directory``."""
    root = Path(directory)
    coverage = Coverage()
    for path in cassette_files(root):
        rel = path.relative_to(root).parts if path != root else path.parts
        provider = rel[1] if len(rel) > 2 else path.parent.name
        try:
            data = yamlserializer.deserialize(yamlserializer.read_cassette(path), source=str(path))
        except Exception:  # corrupt cassettes are `cassettes lint`'s to report
            continue
        items = data.get("interactions") if isinstance(data, dict) else None
        if not isinstance(items, list):  # `interactions: 5`: a TypeError traceback before
            continue
        for i, item in enumerate(items):
            judged = _judge(item)
            if judged is None:
                continue
            chars, tokens = judged
            coverage.judged[provider] += 1
            if tokens < chars // CHARS_PER_TOKEN_MAX:
                coverage.short[provider] += 1
                coverage.examples.setdefault(
                    provider,
                    f"{path}: interactions[{i}]: {tokens} prompt tokens for {chars} system chars",
                )
    return coverage


def _judge(item: Any) -> tuple[int, int] | None:
    """(system characters, reported prompt tokens) of one interaction, or None."""
    try:
        body = json.loads(item["request"]["body"])
        reply = json.loads(item["response"]["body"]["string"])
    except (KeyError, TypeError, ValueError, RecursionError):  # nested past the parser's depth:
        return None  # (a traceback, round 16 B) streamed replies and non-JSON bodies carry
        # usage elsewhere; not judged
    if not isinstance(body, dict) or not isinstance(reply, dict):
        return None
    listed = body.get("messages")
    messages = [m for m in listed if isinstance(m, dict)] if isinstance(listed, list) else []
    system = body.get("system")
    if system is None:
        system = "\n".join(_text(m) for m in messages if m.get("role") == "system")
    rest = sum(len(_text(m)) for m in messages if m.get("role") != "system")
    if not isinstance(system, str) or len(system) < MIN_SYSTEM_CHARS or rest * 4 > len(system):
        return None
    usage = reply.get("usage")
    if not isinstance(usage, dict):
        return None
    tokens = usage.get("prompt_tokens", usage.get("input_tokens"))
    if not isinstance(tokens, int):
        return None
    cached = [usage.get(k) for k in ("cache_read_input_tokens", "cache_creation_input_tokens")]
    return len(system), tokens + sum(n for n in cached if isinstance(n, int))


def _text(message: dict[str, Any]) -> str:
    """A message's text: a string content, or the text of its content blocks and tool calls."""
    content = message.get("content")
    text = content if isinstance(content, str) else json.dumps(content) if content else ""
    if message.get("tool_calls"):
        text += json.dumps(message["tool_calls"])
    return text
