"""Every test: the live pre-flight of ``harness run`` is off (``HARNESS_LIVE_PREFLIGHT=0``,
inherited by the ``harness`` processes the tests start), because the loopback servers that
stand in for models answer canned replies, not the pre-flight's probe. The pre-flight's own
tests (tests/bench/test_live_preflight.py) turn it back on."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_live_preflight(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_LIVE_PREFLIGHT", "0")
