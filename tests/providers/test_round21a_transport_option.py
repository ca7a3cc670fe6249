"""``provider_opts.transport`` that is no httpx async transport (issue 34, adversary round 21,
part A).

``harness.run`` raises ``ConfigError`` for problems found before the loop starts; a transport
of the wrong kind (a string, ``httpx.HTTPTransport``: the synchronous one) was taken, and every
call failed at run time: ``provider crashed: AttributeError: 'HTTPTransport' object has no
attribute 'handle_async_request'``."""

from __future__ import annotations

import httpx
import pytest

import harness


@pytest.mark.parametrize("transport", ["abc", httpx.HTTPTransport(), object()])
def test_a_transport_that_is_not_async_is_a_config_error(
    transport: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-round21a-transport")
    opts = {"transport": transport, "base_url": "http://127.0.0.1:1/v1"}
    with pytest.raises(harness.ConfigError, match=r"provider_opts\.transport: expected an httpx"):
        harness.run("hi", provider="openai:gpt-x", provider_opts=opts)
