"""Every test: the live pre-flight of ``harness run`` is off (``HARNESS_LIVE_PREFLIGHT=0``,
inherited by the ``harness`` processes the tests start), because the loopback servers that
stand in for models answer canned replies, not the pre-flight's probe. The pre-flight's own
tests (tests/bench/test_live_preflight.py) turn it back on.

Session-scoped, so that module- and session-scoped fixtures (which run before any
function-scoped one) record with it off too."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True, scope="session")
def _no_live_preflight() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HARNESS_LIVE_PREFLIGHT", "0")
        yield
