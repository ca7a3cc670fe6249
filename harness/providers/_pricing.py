"""The cost of one provider call in USD: tokens times price.

Where the price comes from, in order:

1. ``profile.prices`` (USD per million tokens), when the profile sets them. Explicit zeros give a
   cost of ``0.0``: the builtin ``ollama`` profile does this, and so should profiles for other
   local servers.
2. Otherwise the maintained `genai-prices <https://github.com/pydantic/genai-prices>`_ data,
   looked up by the profile's kind (``openai`` -> provider ``openai``, ``anthropic`` ->
   ``anthropic``) and the model name. Dated names such as ``gpt-4o-2024-08-06`` match their
   model. genai-prices also handles tiered (long-context) and time-dependent prices.
3. Otherwise the cost is unknown: ``None``, never ``0``. This covers an ``ollama`` or ``mock``
   profile without prices, a model genai-prices does not know, and an OpenAI-compatible server
   serving its own models under a profile without prices.

**How cached tokens count.** :class:`~harness.core._messages.TokenUsage` is provider-neutral,
and the providers normalise it before pricing. ``input_tokens`` is the whole prompt, with
``cache_read_tokens`` and ``cache_write_tokens`` as parts of it. The providers report it this
way:

- OpenAI and compatible servers: ``prompt_tokens`` already includes
  ``prompt_tokens_details.cached_tokens``, so the numbers are used as they are.
- Anthropic: the API reports ``input_tokens`` *without* ``cache_read_input_tokens`` and
  ``cache_creation_input_tokens``. :mod:`harness.providers._anthropic` adds the three together
  into ``input_tokens``.
- Ollama reports no cache tokens.

So the rule is the same for every kind. A cached part is charged at its own price when there is
one (``cache_read_per_mtok``, ``cache_write_per_mtok``, or genai-prices' cache prices), and then
it is *not* also charged as input. Without its own price, a cached part is charged as ordinary
input. Reasoning tokens are part of ``output_tokens`` for every provider and are not charged
again. Inconsistent counts, such as cache reads above the input, are clipped and never raise.

**Offline.** genai-prices ships its price data inside the package (``genai_prices.data``). It
fetches newer data from GitHub only while a ``genai_prices.UpdatePrices`` instance has been
started, which runs an opt-in background thread. Nothing starts one by default, and harness never
does, so pricing never touches the network and a run's cost depends only on the installed
genai-prices version. A host application that wants live prices can start ``UpdatePrices``
itself. Lookups are cached per ``(kind, model)``, so models already priced keep the data they
were first priced with. ``genai_prices`` is imported on first use, so ``import harness`` stays
light.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.core._messages import TokenUsage
from harness.providers._profiles import Prices, ProviderProfile

if TYPE_CHECKING:
    from genai_prices.types import ModelInfo, Provider

__all__ = ["GENAI_PRICES_PROVIDERS", "check_price_as", "price_as_parts", "price_usage"]

#: Profile kind -> genai-prices provider id. Other kinds have no price source but the profile.
GENAI_PRICES_PROVIDERS: dict[str, str] = {"openai": "openai", "anthropic": "anthropic"}

_PER = 1_000_000


@dataclass(slots=True, frozen=True)
class _Tokens:
    """Token counts, clipped to be consistent: the cache parts are within ``input``."""

    input: int
    output: int
    cache_read: int
    cache_write: int

    @classmethod
    def of(cls, usage: TokenUsage) -> _Tokens:
        total = max(usage.input_tokens, 0)
        read = min(max(usage.cache_read_tokens, 0), total)
        write = min(max(usage.cache_write_tokens, 0), total - read)
        return cls(total, max(usage.output_tokens, 0), read, write)


def price_usage(
    profile: ProviderProfile, model: str | None, usage: TokenUsage | None
) -> float | None:
    """The cost in USD of ``usage`` on ``model`` under ``profile``; ``None`` when unknown.

    A profile priced at zero for everything (a local model) costs 0.0 even when the server
    reported no usage: nothing times zero is known."""
    if usage is None:
        if profile.prices is not None and _free(profile.prices):
            return 0.0
        return None
    tokens = _Tokens.of(usage)
    if profile.prices is not None:
        return _priced(profile.prices, tokens)
    kind: str = profile.kind
    if profile.price_as:
        kind, model = price_as_parts(profile)
    if not model:
        return None
    found = _lookup(kind, model)
    if found is None:
        return None
    return _genai_priced(found, tokens)


def price_as_parts(profile: ProviderProfile) -> tuple[str, str]:
    """``(kind, model)`` named by ``profile.price_as`` (``MODEL`` or ``PROVIDER:MODEL``)."""
    spec = profile.price_as or ""
    provider, sep, model = spec.partition(":")
    if sep and provider in GENAI_PRICES_PROVIDERS:
        return provider, model
    return profile.kind, spec


def check_price_as(profile: ProviderProfile) -> None:
    """Raise ConfigError when ``price_as`` names a model genai-prices does not know."""
    if not profile.price_as:
        return
    kind, model = price_as_parts(profile)
    if _lookup(kind, model) is None:
        from harness.errors import ConfigError

        raise ConfigError(
            f"provider {profile.name!r}: price_as {profile.price_as!r} is not a model "
            f"genai-prices knows for {kind!r}; use e.g. 'openai:gpt-4o-mini' or "
            "'anthropic:claude-3-5-haiku-latest'"
        )


def _free(prices: Prices) -> bool:
    rates = (
        prices.input_per_mtok,
        prices.output_per_mtok,
        prices.cache_read_per_mtok,
        prices.cache_write_per_mtok,
    )
    return all(not rate for rate in rates)


def _priced(prices: Prices, t: _Tokens) -> float:
    uncached = t.input
    cost = t.output * prices.output_per_mtok
    if prices.cache_read_per_mtok is not None:
        uncached -= t.cache_read
        cost += t.cache_read * prices.cache_read_per_mtok
    if prices.cache_write_per_mtok is not None:
        uncached -= t.cache_write
        cost += t.cache_write * prices.cache_write_per_mtok
    return (cost + uncached * prices.input_per_mtok) / _PER


@functools.lru_cache(maxsize=512)
def _lookup(kind: str, model: str) -> tuple[Provider, ModelInfo] | None:
    """genai-prices' provider and model for ``(kind, model)``, or ``None`` when it has none."""
    provider_id = GENAI_PRICES_PROVIDERS.get(kind)
    if provider_id is None:
        return None
    import genai_prices

    try:
        calc = genai_prices.calc_price(genai_prices.Usage(), model, provider_id=provider_id)
    except (LookupError, ValueError):
        return None
    return calc.provider, calc.model


def _genai_priced(found: tuple[Provider, ModelInfo], t: _Tokens) -> float | None:
    from genai_prices import Usage

    provider, model = found
    usage = Usage(
        input_tokens=t.input,
        output_tokens=t.output,
        cache_read_tokens=t.cache_read,
        cache_write_tokens=t.cache_write,
    )
    try:
        return float(model.calc_price(usage, provider).total_price)
    except (ValueError, ArithmeticError, TypeError):  # bad data must not break a run
        return None
