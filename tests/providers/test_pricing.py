"""Cost from token usage: genai-prices for known models, profile overrides, cached tokens, unknown
models, offline behaviour, and the providers' usage convention priced end to end."""

from __future__ import annotations

import subprocess
import sys
import threading
from decimal import Decimal
from typing import Any

import genai_prices
import httpx
import pytest

from harness.core import TokenUsage
from harness.providers._base import Request
from harness.providers._chat import ChatProvider
from harness.providers._pricing import _lookup, price_usage
from harness.providers._profiles import BUILTIN_PROFILES, Prices, ProviderProfile

OPENAI = BUILTIN_PROFILES["openai"]
ANTHROPIC = BUILTIN_PROFILES["anthropic"]


def genai_rates(provider_id: str, model: str) -> dict[str, float | None]:
    """genai-prices' own per-million-token prices for a model (flat prices only)."""
    model_price = genai_prices.calc_price(
        genai_prices.Usage(), model, provider_id=provider_id
    ).model_price
    rates: dict[str, float | None] = {}
    for key in ("input_mtok", "output_mtok", "cache_read_mtok", "cache_write_mtok"):
        value = getattr(model_price, key)
        assert value is None or isinstance(value, Decimal), f"{model} {key} is tiered"
        rates[key] = None if value is None else float(value)
    return rates


def by_hand(rates: dict[str, float | None], usage: TokenUsage) -> float:
    """Per-token cost; ``usage.input_tokens`` includes the cached parts."""
    read, write = rates["cache_read_mtok"], rates["cache_write_mtok"]
    assert rates["input_mtok"] is not None
    assert rates["output_mtok"] is not None
    uncached = usage.input_tokens
    cost = usage.output_tokens * rates["output_mtok"]
    if read is not None:
        uncached -= usage.cache_read_tokens
        cost += usage.cache_read_tokens * read
    if write is not None:
        uncached -= usage.cache_write_tokens
        cost += usage.cache_write_tokens * write
    return (cost + uncached * rates["input_mtok"]) / 1_000_000


# --- genai-prices --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("profile", "provider_id", "model", "usage"),
    [
        (OPENAI, "openai", "gpt-4o-mini", TokenUsage(12_000, 800)),
        (OPENAI, "openai", "gpt-4o", TokenUsage(10_000, 500, cache_read_tokens=6_000)),
        (
            ANTHROPIC,
            "anthropic",
            "claude-3-5-haiku-latest",
            TokenUsage(20_000, 1_000, cache_read_tokens=15_000, cache_write_tokens=2_000),
        ),
        (
            BUILTIN_PROFILES["claude"],
            "anthropic",
            "claude-sonnet-4-20250514",
            TokenUsage(9_000, 300, cache_write_tokens=4_000),
        ),
    ],
)
def test_known_models_are_priced_from_genai_prices(
    profile: ProviderProfile, provider_id: str, model: str, usage: TokenUsage
) -> None:
    rates = genai_rates(provider_id, model)
    cost = price_usage(profile, model, usage)
    assert cost is not None
    assert cost > 0
    assert cost == pytest.approx(by_hand(rates, usage), rel=1e-9)


def test_dated_model_names_match_their_model() -> None:
    usage = TokenUsage(1_000, 100)
    assert price_usage(OPENAI, "gpt-4o-2024-08-06", usage) == price_usage(OPENAI, "gpt-4o", usage)
    assert price_usage(OPENAI, "GPT-4o", usage) == price_usage(OPENAI, "gpt-4o", usage)


@pytest.mark.parametrize(
    ("profile", "model"),
    [(OPENAI, "gpt-4o-mini"), (ANTHROPIC, "claude-3-5-haiku-latest")],
)
def test_cached_tokens_are_cheaper_than_uncached(profile: ProviderProfile, model: str) -> None:
    uncached = price_usage(profile, model, TokenUsage(100_000, 100))
    cached = price_usage(profile, model, TokenUsage(100_000, 100, cache_read_tokens=80_000))
    assert uncached is not None
    assert cached is not None
    assert cached < uncached


def test_unknown_model_costs_none_not_zero() -> None:
    assert price_usage(OPENAI, "no-such-model-xyz", TokenUsage(1_000, 10)) is None
    assert price_usage(ANTHROPIC, "claude-imaginary-9", TokenUsage(1_000, 10)) is None


def test_local_server_profile_without_prices_costs_none() -> None:
    local = ProviderProfile(name="llamacpp", kind="openai", base_url="http://127.0.0.1:8080/v1")
    assert price_usage(local, "gemma-3-270m", TokenUsage(1_000, 10)) is None


def test_ollama_and_mock_without_prices_cost_none() -> None:
    unpriced = BUILTIN_PROFILES["ollama"].model_copy(update={"prices": None})
    assert price_usage(unpriced, "llama3.1", TokenUsage(1_000, 10)) is None
    assert price_usage(BUILTIN_PROFILES["mock"], "gpt-4o", TokenUsage(1_000, 10)) is None


def test_builtin_ollama_is_free() -> None:
    assert price_usage(BUILTIN_PROFILES["ollama"], "llama3.1", TokenUsage(5_000, 500)) == 0.0


def test_no_usage_or_no_model_costs_none() -> None:
    assert price_usage(OPENAI, "gpt-4o", None) is None
    assert price_usage(OPENAI, None, TokenUsage(1_000, 10)) is None
    assert price_usage(OPENAI, "", TokenUsage(1_000, 10)) is None


def test_zero_usage_of_a_known_model_costs_zero() -> None:
    assert price_usage(OPENAI, "gpt-4o", TokenUsage()) == 0.0


def test_inconsistent_counts_are_clipped_not_raised() -> None:
    # More cache reads than input: counted as all-cached input.
    odd = price_usage(OPENAI, "gpt-4o", TokenUsage(100, 10, cache_read_tokens=500))
    clipped = price_usage(OPENAI, "gpt-4o", TokenUsage(100, 10, cache_read_tokens=100))
    assert odd == clipped
    assert price_usage(OPENAI, "gpt-4o", TokenUsage(-5, -1)) == 0.0


def test_lookups_are_cached_per_kind_and_model() -> None:
    _lookup.cache_clear()
    price_usage(OPENAI, "gpt-4o-mini", TokenUsage(1, 1))
    price_usage(OPENAI, "gpt-4o-mini", TokenUsage(2, 2))
    price_usage(OPENAI, "no-such-model-xyz", TokenUsage(1, 1))
    price_usage(OPENAI, "no-such-model-xyz", TokenUsage(1, 1))
    info = _lookup.cache_info()
    assert (info.hits, info.misses) == (2, 2)


# --- profile prices ------------------------------------------------------------------------------


def priced(**prices: float | None) -> ProviderProfile:
    return OPENAI.model_copy(update={"prices": Prices.model_validate(prices)})


def test_profile_prices_win_over_genai_prices() -> None:
    profile = priced(input_per_mtok=1.0, output_per_mtok=2.0)
    cost = price_usage(profile, "gpt-4o", TokenUsage(1_000_000, 500_000))
    assert cost == pytest.approx(1.0 + 1.0)
    assert cost != price_usage(OPENAI, "gpt-4o", TokenUsage(1_000_000, 500_000))


def test_profile_prices_apply_to_unknown_models_and_without_a_model() -> None:
    profile = priced(input_per_mtok=3.0, output_per_mtok=6.0)
    assert price_usage(profile, "my-finetune", TokenUsage(2_000, 1_000)) == pytest.approx(0.012)
    assert price_usage(profile, None, TokenUsage(2_000, 1_000)) == pytest.approx(0.012)


def test_explicit_zero_prices_cost_zero() -> None:
    profile = priced(input_per_mtok=0, output_per_mtok=0)
    cost = price_usage(profile, "gpt-4o", TokenUsage(10_000, 1_000, cache_read_tokens=5_000))
    assert cost == 0.0
    assert isinstance(cost, float)


def test_profile_cache_prices_replace_the_input_price_for_cached_parts() -> None:
    profile = priced(
        input_per_mtok=10.0,
        output_per_mtok=20.0,
        cache_read_per_mtok=1.0,
        cache_write_per_mtok=12.5,
    )
    usage = TokenUsage(1_000_000, 100_000, cache_read_tokens=600_000, cache_write_tokens=300_000)
    # 100k uncached * 10 + 600k read * 1 + 300k write * 12.5 + 100k out * 20, per million.
    expected = 1.0 + 0.6 + 3.75 + 2.0
    assert price_usage(profile, "any", usage) == pytest.approx(expected)


def test_cached_parts_without_their_own_price_are_charged_as_input() -> None:
    profile = priced(input_per_mtok=10.0, output_per_mtok=0.0)
    usage = TokenUsage(1_000_000, 0, cache_read_tokens=600_000, cache_write_tokens=300_000)
    assert price_usage(profile, "any", usage) == pytest.approx(10.0)


def test_only_the_cache_read_price_given() -> None:
    profile = priced(input_per_mtok=10.0, output_per_mtok=0.0, cache_read_per_mtok=1.0)
    usage = TokenUsage(1_000_000, 0, cache_read_tokens=500_000, cache_write_tokens=200_000)
    assert price_usage(profile, "any", usage) == pytest.approx(5.0 + 0.5)


# --- offline and light ---------------------------------------------------------------------------


def test_pricing_never_touches_the_network(monkeypatch: pytest.MonkeyPatch) -> None:
    import httpx2  # genai-prices' HTTP client, used only by its opt-in UpdatePrices

    def no_network(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("genai-prices tried to fetch prices")

    monkeypatch.setattr(httpx2, "get", no_network)
    monkeypatch.setattr(httpx2.Client, "send", no_network)
    _lookup.cache_clear()
    assert price_usage(ANTHROPIC, "claude-3-5-haiku-latest", TokenUsage(1_000, 10)) is not None
    assert price_usage(OPENAI, "no-such-model-xyz", TokenUsage(1_000, 10)) is None
    assert not any(t.name.startswith("genai_prices") for t in threading.enumerate())


@pytest.mark.slow
def test_import_harness_does_not_import_genai_prices() -> None:
    code = (
        "import sys, harness, harness.providers._chat, harness.providers._pricing; "
        "assert 'genai_prices' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


# --- the providers' usage, priced end to end ------------------------------------------------------

ANTHROPIC_MESSAGE = {
    "id": "msg_01",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-20250514",
    "content": [{"type": "text", "text": "Hello."}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {
        "input_tokens": 120,
        "output_tokens": 40,
        "cache_read_input_tokens": 3_000,
        "cache_creation_input_tokens": 500,
    },
}
OPENAI_COMPLETION = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1741569952,
    "model": "gpt-4o-mini-2024-07-18",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "Hello."},
            "finish_reason": "stop",
        }
    ],
    "usage": {
        "prompt_tokens": 2_000,
        "completion_tokens": 40,
        "total_tokens": 2_040,
        "prompt_tokens_details": {"cached_tokens": 1_536},
    },
}


@pytest.mark.parametrize(
    ("kind", "raw", "flavor"),
    [("anthropic", ANTHROPIC_MESSAGE, "default"), ("openai", OPENAI_COMPLETION, "chat")],
)
async def test_provider_cost_matches_genai_prices_on_the_raw_response(
    kind: str, raw: dict[str, Any], flavor: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The providers' TokenUsage convention and this module agree: the cost of a real-shaped
    response equals what genai-prices computes from the raw API usage block."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    profile = BUILTIN_PROFILES[kind].model_copy(update={"stream": False, "max_retries": 0})
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json=raw))
    from harness.providers._anthropic import AnthropicProvider
    from harness.providers._openai import OpenAIProvider

    cls: type[ChatProvider] = AnthropicProvider if kind == "anthropic" else OpenAIProvider
    provider = cls(profile, str(raw["model"]), transport=transport)
    try:
        response = await provider.complete(Request([]))
    finally:
        await provider.aclose()
    extracted = genai_prices.extract_usage(raw, provider_id=kind, api_flavor=flavor)
    expected = float(extracted.calc_price().total_price)
    assert response.cost_usd == pytest.approx(expected, rel=1e-9)
    assert response.usage is not None
    assert response.usage.input_tokens == extracted.usage.input_tokens


def test_a_free_profile_costs_zero_even_without_usage() -> None:
    from harness.providers._profiles import Prices, ProviderProfile

    free = ProviderProfile(
        name="local", kind="openai", prices=Prices(input_per_mtok=0, output_per_mtok=0)
    )
    priced = ProviderProfile(
        name="p", kind="openai", prices=Prices(input_per_mtok=1, output_per_mtok=2)
    )
    assert price_usage(free, "m", None) == 0.0
    assert price_usage(priced, "m", None) is None
