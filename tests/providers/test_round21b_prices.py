"""A fault found by adversary round 21, part B (issue 34): a profile's prices were bounded below
only. ``input_per_mtok = 1e308`` in ``harness.toml`` priced a call of 500 tokens at ``inf``: every
cell an error, ``invalid_response: the provider answered a Response whose cost_usd is inf``
(the provider answered no cost; the profile's price made it). TOML's own ``inf`` was taken too.
Both fail at load now. Fails on 84cec7a."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import ConfigError
from harness.providers._profiles import load_profiles

_PROFILE = """
[providers.p]
kind = "openai"
base_url = "http://127.0.0.1:9/v1"
model = "m"
prices = {{input_per_mtok = {price}, output_per_mtok = 1.0}}
"""


@pytest.mark.parametrize("price", ["1e308", "inf", "1e7"])
def test_a_price_no_cost_can_hold_is_refused(tmp_path: Path, price: str) -> None:
    (tmp_path / "harness.toml").write_text(_PROFILE.format(price=price))
    with pytest.raises(ConfigError, match="input_per_mtok"):
        load_profiles(tmp_path)


def test_a_dear_price_is_taken(tmp_path: Path) -> None:
    (tmp_path / "harness.toml").write_text(_PROFILE.format(price="150.0"))
    prices = load_profiles(tmp_path)["p"].prices
    assert prices is not None
    assert prices.input_per_mtok == 150.0
