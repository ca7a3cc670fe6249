"""Provider spec strings (``NAME[:MODEL]``) and Provider objects -> a ready Provider."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.errors import ConfigError
from harness.providers._base import Provider

__all__ = ["HTTP_OPTS", "resolve_provider"]

#: provider_opts keys the HTTP providers accept (``transport`` is an httpx transport).
HTTP_OPTS = frozenset(
    {
        "base_url",
        "transport",
        "stream",
        "timeout_s",
        "max_retries",
        "retry_initial_s",
        "context_window",
    }
)


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
        from harness.providers._profiles import resolve_profile

        profile, spec_model = resolve_profile(spec)
        model = model or spec_model
        if profile.kind == "mock":
            from harness.providers._mock import MockProvider

            provider = MockProvider.from_opts(opts, model)
            return provider, provider.model, True
        http_provider = _http_provider(profile, model, opts)
        return http_provider, http_provider.model, True
    if isinstance(spec, Provider):
        return spec, model or spec.model, False
    raise ConfigError(
        f"provider: {type(spec).__name__} is not a Provider (needs name, model, capabilities, "
        "async complete(request, on_delta) and async aclose())"
    )


def _http_provider(profile: Any, model: str | None, opts: Mapping[str, Any]) -> Provider:
    unknown = set(opts) - HTTP_OPTS
    if unknown:
        raise ConfigError(
            f"provider_opts: unknown keys for provider {profile.name!r}: {sorted(unknown)}; "
            f"known: {sorted(HTTP_OPTS)}"
        )
    from harness.providers._kinds import PROVIDER_KINDS

    cls = PROVIDER_KINDS.get(profile.kind)
    if not model:
        raise ConfigError(
            f"provider {profile.name!r}: no model; use '{profile.name}:MODEL' or set "
            "model in the profile"
        )
    provider: Provider = cls(profile, model, **dict(opts))
    return provider
