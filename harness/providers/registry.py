"""Provider spec strings (``NAME[:MODEL]``) and Provider objects -> a ready Provider."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.errors import ConfigError
from harness.providers.base import Provider

__all__ = ["KNOWN_PROVIDERS", "resolve_provider"]

KNOWN_PROVIDERS = ("mock",)


def resolve_provider(
    spec: Any, model: str | None, opts: Mapping[str, Any]
) -> tuple[Provider, str | None, bool]:
    """Returns the provider, the model to request, and whether the caller owns (must close) it."""
    if spec is None:
        raise ConfigError(
            "provider: required; pass a spec string such as 'mock' or 'openai:gpt-4o-mini', "
            "or a Provider object"
        )
    if isinstance(spec, str):
        name, _, spec_model = spec.partition(":")
        model = model or spec_model or None
        if name == "mock":
            from harness.providers.mock import MockProvider

            provider = MockProvider.from_opts(opts, model)
            return provider, provider.model, True
        raise ConfigError(
            f"provider: unknown provider {name!r} in {spec!r}; known: {', '.join(KNOWN_PROVIDERS)}"
        )
    if isinstance(spec, Provider):
        return spec, model or spec.model, False
    raise ConfigError(
        f"provider: {type(spec).__name__} is not a Provider (needs name, model, capabilities, "
        "async complete(request, on_delta) and async aclose())"
    )
