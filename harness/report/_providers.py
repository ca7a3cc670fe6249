"""What the report needs to know about the providers of a run: which are scripted (the mock
provider: outcomes written by the suite's author, checks of the suites rather than findings about
modes) and which are priced at another model's rates."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["is_scripted", "priced_as", "scripted_providers"]


def is_scripted(provider: str) -> bool:
    """True for a provider whose replies are scripted (profile kind ``mock``). A provider this
    checkout does not know is taken for a real one unless it is named ``mock`` or ``mock:...``."""
    from harness.errors import HarnessError
    from harness.providers._profiles import resolve_profile

    try:
        profile, _ = resolve_profile(provider)
    except HarnessError:
        return provider == "mock" or provider.startswith("mock:")
    return profile.kind == "mock"


def scripted_providers(providers: Iterable[str]) -> frozenset[str]:
    """The scripted providers among ``providers``."""
    return frozenset(p for p in providers if is_scripted(str(p)))


def priced_as(providers: Iterable[str]) -> dict[str, str]:
    """Which providers' costs are real token counts priced at another model's rates."""
    from harness.errors import HarnessError
    from harness.providers._profiles import resolve_profile

    out: dict[str, str] = {}
    for provider in providers:
        try:
            profile, _ = resolve_profile(provider)
        except HarnessError:  # a provider of an old run that this checkout no longer knows
            continue
        if profile.price_as:
            out[provider] = profile.price_as
    return out
