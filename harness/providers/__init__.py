"""harness.providers: the Provider protocol, Request/Response, the builtin wire formats (OpenAI,
Anthropic, Ollama, mock), profiles and pricing (docs/providers.md).

A provider for a new wire format usually subclasses :class:`ChatProvider` (docs/extending.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness._exports import lazy_exports

if TYPE_CHECKING:
    from harness.providers._anthropic import AnthropicProvider as AnthropicProvider
    from harness.providers._base import Capabilities as Capabilities
    from harness.providers._base import DeltaHandler as DeltaHandler
    from harness.providers._base import Provider as Provider
    from harness.providers._base import Request as Request
    from harness.providers._base import Response as Response
    from harness.providers._base import ToolSpec as ToolSpec
    from harness.providers._chat import ChatProvider as ChatProvider
    from harness.providers._kinds import PROVIDER_KINDS as PROVIDER_KINDS
    from harness.providers._mock import MockProvider as MockProvider
    from harness.providers._ollama import OllamaProvider as OllamaProvider
    from harness.providers._openai import OpenAIProvider as OpenAIProvider
    from harness.providers._pricing import price_usage as price_usage
    from harness.providers._profiles import BUILTIN_PROFILES as BUILTIN_PROFILES
    from harness.providers._profiles import Prices as Prices
    from harness.providers._profiles import ProviderProfile as ProviderProfile
    from harness.providers._profiles import load_profiles as load_profiles
    from harness.providers._profiles import resolve_profile as resolve_profile

#: Each private module and the public names it exports here (``__all__`` derives from it).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "harness.providers._anthropic": ("AnthropicProvider",),
    "harness.providers._base": (
        "Capabilities",
        "DeltaHandler",
        "Provider",
        "Request",
        "Response",
        "ToolSpec",
    ),
    "harness.providers._chat": ("ChatProvider",),
    "harness.providers._mock": ("MockProvider",),
    "harness.providers._ollama": ("OllamaProvider",),
    "harness.providers._openai": ("OpenAIProvider",),
    "harness.providers._pricing": ("price_usage",),
    "harness.providers._profiles": (
        "BUILTIN_PROFILES",
        "Prices",
        "ProviderProfile",
        "load_profiles",
        "resolve_profile",
    ),
    "harness.providers._kinds": ("PROVIDER_KINDS",),
}
__all__, __getattr__ = lazy_exports(__name__, _EXPORTS)
