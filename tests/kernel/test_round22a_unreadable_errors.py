"""A plug-in's attribute raising an exception whose message cannot be read (issue 34,
adversary round 22, part A).

Round 21 made a plug-in provider's ``name``, ``model`` and ``capabilities`` that raise a
``ConfigError`` naming what they raised, formatted as
``f"{type(exc).__name__}: {exc}"``: an exception whose ``__str__`` raises made that formatting
raise, and ``harness.run`` ended in the ``__str__``'s own ``ValueError`` (a traceback from
inside the harness, no ``ConfigError``). Such an exception is named by its type now
(``described``), as the kernel's other plug-in errors are."""

from __future__ import annotations

from typing import Any

import pytest

import harness
from harness.errors import ConfigError
from harness.providers._base import Capabilities, Response


class _Unreadable(Exception):
    def __str__(self) -> str:
        raise ValueError("its __str__ raised")


class _Plug:
    name = "plug"
    model = "m"
    capabilities = Capabilities()

    async def complete(self, request: Any, on_delta: Any = None) -> Response:
        return Response(text="hi")

    async def aclose(self) -> None:
        pass


class _Raising(_Plug):
    def __init__(self, attribute: str) -> None:
        self.attribute = attribute

    def __getattribute__(self, name: str) -> Any:
        if name == object.__getattribute__(self, "attribute"):
            raise _Unreadable
        return object.__getattribute__(self, name)


class _Caps:
    native_tool_calls = True
    json_mode = False
    structured_output = False
    context_window = None

    @property
    def streaming(self) -> bool:
        raise _Unreadable


@pytest.mark.parametrize("attribute", ["name", "model", "capabilities"])
def test_a_provider_attribute_raising_an_unreadable_exception_is_a_config_error(
    attribute: str,
) -> None:
    with pytest.raises(ConfigError, match=r"_Unreadable \(its message could not be read\)"):
        harness.run("hi", provider=_Raising(attribute))


def test_a_capability_raising_an_unreadable_exception_is_a_config_error() -> None:
    provider = _Plug()
    provider.capabilities = _Caps()  # type: ignore[assignment]
    with pytest.raises(ConfigError, match="streaming cannot be read: _Unreadable"):
        harness.run("hi", provider=provider)
