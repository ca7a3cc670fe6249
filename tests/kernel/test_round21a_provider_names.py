"""A plug-in provider whose ``name`` (a property: its code) raises once the run is under way
(issue 34, adversary round 21, part A).

The kernel reads a plug-in provider's ``name``, ``model`` and ``capabilities`` and a plug-in
mode's ``name`` wherever it needs them, outside any guard: ``to_result`` reads both names after
the run's last step, so a ``name`` raising there left ``harness.run`` as that ``ValueError`` (or
``GeneratorExit``) with a traceback and no ``Done`` event; ``capabilities`` raising in a call
ended the run as the harness's ``internal error`` (its traceback logged)."""

from __future__ import annotations

from typing import Any

import pytest

import harness
from harness.providers._base import Capabilities, Response


class _Renamed:
    """``name`` raises once the provider has answered."""

    model = "m"
    capabilities = Capabilities()
    answered = False

    def __init__(self, base: type[BaseException]) -> None:
        self.base = base

    @property
    def name(self) -> str:
        if self.answered:
            raise self.base("name boom")
        return "renamed"

    async def complete(self, request: Any, on_delta: Any = None) -> Response:
        self.answered = True
        return Response(text="hi")

    async def aclose(self) -> None:
        pass


@pytest.mark.parametrize("base", [ValueError, GeneratorExit])
def test_a_provider_name_raising_late_still_ends_in_a_result(base: type[BaseException]) -> None:
    events: list[str] = []
    result = harness.run(  # raised ValueError / GeneratorExit on 84cec7a, no Done
        "hi", provider=_Renamed(base), on_event=lambda e: events.append(type(e).__name__)
    )
    assert result.text == "hi"
    assert events[-1] == "Done"
