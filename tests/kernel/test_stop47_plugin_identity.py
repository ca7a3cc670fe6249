"""A plug-in provider's ``name``, ``model`` and ``capabilities`` and a plug-in mode's ``name``
are read once, as the run is made (issue 34; round 21 part A's finding, fixed by the lead).

Read wherever the kernel needed them, one that raised did so outside any guard: ``capabilities``
raising in a call ended the run as the harness's ``internal error``; ``model`` raising in
``isinstance`` (a runtime protocol check reads it) left ``harness.run`` with the plug-in's own
``ValueError``. Now each is read once and a failure is a ``ConfigError`` naming it, before
anything runs; the run uses what was read."""

from __future__ import annotations

from typing import Any

import pytest

import harness
from harness.errors import ConfigError
from harness.providers._base import Capabilities, Response


class _Plug:
    name = "plug"
    model = "m"
    capabilities = Capabilities()
    calls = 0

    async def complete(self, request: Any, on_delta: Any = None) -> Response:
        self.calls += 1
        return Response(text="hi")

    async def aclose(self) -> None:
        pass


class _Raising(_Plug):
    def __init__(self, attribute: str) -> None:
        self.attribute = attribute

    def __getattribute__(self, name: str) -> Any:
        if name == object.__getattribute__(self, "attribute"):
            raise ValueError(f"{name} boom")
        return object.__getattribute__(self, name)


class _Caps:
    native_tool_calls = True
    json_mode = False
    structured_output = False
    context_window = None

    @property
    def streaming(self) -> bool:
        raise RuntimeError("streaming boom")


@pytest.mark.parametrize("attribute", ["name", "model", "capabilities"])
def test_a_provider_attribute_that_raises_is_a_config_error(attribute: str) -> None:
    with pytest.raises(ConfigError, match=f"{attribute} boom"):
        harness.run("hi", provider=_Raising(attribute))


def test_a_capability_that_raises_is_a_config_error_not_an_internal_error() -> None:
    provider = _Plug()
    provider.capabilities = _Caps()  # type: ignore[assignment]
    with pytest.raises(ConfigError, match="streaming cannot be read: RuntimeError"):
        harness.run("hi", provider=provider, on_event=lambda e: None)
    assert provider.calls == 0  # nothing ran


@pytest.mark.parametrize("window", [-1, "big", 1.5, True])
def test_a_context_window_that_is_not_a_count_is_refused(window: object) -> None:
    provider = _Plug()
    provider.capabilities = Capabilities(context_window=window)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="context_window must be a whole number"):
        harness.run("hi", provider=provider)


def test_the_names_read_are_the_results() -> None:
    result = harness.run("hi", provider=_Plug())
    assert (result.provider, result.mode, result.text) == ("plug", "react", "hi")
