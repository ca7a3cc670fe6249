"""Provider kinds (wire formats): the :data:`PROVIDER_KINDS` registry.

A profile's ``kind`` names the class that speaks its wire format: ``openai`` (chat completions),
``anthropic`` (messages), ``ollama`` (``/api/chat``), ``mock`` (the scripted provider), or a
plug-in's, registered under the entry point group ``harness.providers`` or given as
``package.module:Class``. A plug-in kind is a :class:`harness.providers.ChatProvider` subclass
(or any callable with its signature, ``(profile, model, **provider_opts) -> Provider``).
"""

from __future__ import annotations

from typing import Any

from harness._plugins import Registry

__all__ = ["PROVIDER_KINDS"]

#: Provider kinds by name (see the module docstring).
PROVIDER_KINDS: Registry[Any] = Registry(
    "provider kind",
    "harness.providers",
    {
        "openai": "harness.providers._openai:OpenAIProvider",
        "anthropic": "harness.providers._anthropic:AnthropicProvider",
        "ollama": "harness.providers._ollama:OllamaProvider",
        "mock": "harness.providers._mock:MockProvider",
    },
)
