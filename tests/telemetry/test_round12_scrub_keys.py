"""What round 12 part A noted beside its faults: an exported span's attribute *keys* were not
scrubbed (a caller's ``trace_attributes`` may name a secret), and a generator function was taken
as a tool (the model got the generator's repr)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

import harness
from harness.cassettes._secrets import Redactor
from harness.errors import ConfigError
from harness.telemetry._setup import configure_tracing

KEY = "sk-keyname-Zq8Wm3Lp0Rt5"


def test_an_attribute_key_holding_a_secret_is_scrubbed_in_exported_spans(tmp_path: Path) -> None:
    handle = configure_tracing(file=tmp_path / "s.jsonl", in_memory=True, scrub=Redactor([KEY]))
    with handle.provider.get_tracer("t").start_as_current_span("s") as span:
        span.set_attribute(f"user.{KEY}", "v")
        span.add_event("e", {f"k.{KEY}": 1})
    handle.shutdown()
    (exported,) = handle.finished_spans()
    assert exported.attributes == {"user.REDACTED": "v"}  # the key was kept before
    assert exported.events[0].attributes == {"k.REDACTED": 1}
    assert KEY not in (tmp_path / "s.jsonl").read_text(encoding="utf-8")


def _gen(x: str) -> Iterator[str]:
    """Yields."""
    yield x


async def _agen(x: str) -> AsyncIterator[str]:
    """Yields."""
    yield x


@pytest.mark.parametrize("fn", [_gen, _agen], ids=["generator", "async-generator"])
def test_a_generator_function_is_refused_as_a_tool(fn: object) -> None:
    with pytest.raises(ConfigError, match="is a generator function; a tool returns its result"):
        harness.tool(fn)  # type: ignore[call-overload]
