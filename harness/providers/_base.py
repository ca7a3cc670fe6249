"""The provider contract: a :class:`Request` goes in, a :class:`Response` comes out.

Providers know nothing of modes or the loop. A failed call raises
:class:`~harness.errors.ProviderError` with a ``kind``; the modes map kinds to terminations.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from harness.core._budget import CallPurpose
from harness.core._messages import Message, TokenUsage, ToolCall

__all__ = [
    "Capabilities",
    "DeltaHandler",
    "Provider",
    "Request",
    "Response",
    "ToolSpec",
]

#: Receives streamed deltas: ``("content" | "thinking", text)``.
DeltaHandler = Callable[[Literal["content", "thinking"], str], None]


@dataclass(slots=True, frozen=True)
class ToolSpec:
    """What a provider sends the model about a tool."""

    name: str
    description: str
    parameters: dict[str, Any]

    def object_schema(self) -> dict[str, Any]:
        """The parameters as an object schema (``type`` and ``properties`` filled in), the form
        APIs that validate tool schemas (Anthropic, Ollama) insist on."""
        schema = dict(self.parameters) if self.parameters else {}
        schema.setdefault("type", "object")
        if schema["type"] == "object":
            schema.setdefault("properties", {})
        return schema

    def function_tool(self, *, object_schema: bool = False) -> dict[str, Any]:
        """The ``{"type": "function", "function": ...}`` entry of OpenAI chat completions and
        Ollama. ``object_schema``: the parameters as :meth:`object_schema` (Ollama validates
        them); else as given (OpenAI: its recorded request bodies keep them so)."""
        parameters = self.object_schema() if object_schema else self.parameters
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": parameters,
            },
        }


@dataclass(slots=True)
class Request:
    """One provider call. ``purpose`` tags why the kernel makes it (main, plan, reflect...)."""

    messages: list[Message]
    model: str | None = None
    system_prompt: str | None = None
    tools: list[ToolSpec] | None = None
    tool_choice: str | dict[str, Any] | None = None
    temperature: float | None = None
    top_p: float | None = None
    seed: int | None = None
    max_tokens: int | None = None
    stop: list[str] | None = None
    timeout_s: float | None = None
    response_format: dict[str, Any] | None = None
    #: Few-shot conversations for this call, beside the profile's own (profile ``Example``
    #: mappings); providers that render tools as text send them through that protocol.
    examples: tuple[dict[str, Any], ...] = ()
    provider_opts: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    purpose: CallPurpose = "main"


@dataclass(slots=True)
class Response:
    """A provider's answer. ``cost_usd`` is ``None`` when the price is unknown."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    thinking: str | None = None
    finish_reason: str = "stop"
    usage: TokenUsage | None = None
    cost_usd: float | None = None
    model: str | None = None
    id: str | None = None
    raw: Any = None
    #: Set when tool calls written as text could not be parsed (ends the run as
    #: ``error_schema_validation``).
    tool_call_error: str | None = None
    #: Repairs made to read tool calls written as text (e.g. a trailing comma dropped); the
    #: kernel records them as a warning on the run's trace. Empty: read as written.
    tool_call_repairs: list[str] = field(default_factory=list)
    #: Errors of failed attempts that were retried before this response (empty: first try).
    retries: list[str] = field(default_factory=list)
    #: How the reply was read when it was not in the expected form (e.g. tool calls written as
    #: bare JSON, harness.providers._bare_calls); None for a reply taken as it came.
    repaired: str | None = None


@dataclass(slots=True, frozen=True)
class Capabilities:
    """What a provider (and model) can do.

    ``context_window`` is the model's context size in tokens (``None``: unknown, the kernel then
    assumes 128,000 for proactive compaction).
    """

    native_tool_calls: bool = True
    streaming: bool = False
    json_mode: bool = False
    structured_output: bool = False
    context_window: int | None = None


@runtime_checkable
class Provider(Protocol):
    """A model endpoint. ``name`` is the provider's spec name (``mock``, ``openai``, a profile)."""

    name: str
    model: str | None
    capabilities: Capabilities

    async def complete(self, request: Request, on_delta: DeltaHandler | None = None) -> Response:
        """Make one call. Stream deltas to ``on_delta`` when given and supported."""
        ...

    async def aclose(self) -> None:
        """Release connections. Safe to call twice."""
        ...
