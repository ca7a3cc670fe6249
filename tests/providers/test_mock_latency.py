"""The mock provider's ``latency_s`` option: seeded delays per call, validated, and reachable from
a suite's ``mock:`` block. Sleeps are recorded, not timed (speed belongs to benchmarks)."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path
from typing import Any

import pytest

import harness
from harness.errors import ConfigError
from harness.providers._mock import MockProvider
from harness.suites._load import load_suites
from harness.suites._suite import SuiteError


@pytest.fixture
def slept(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Every delay the mock asks asyncio.sleep for (the sleep itself is skipped)."""
    delays: list[float] = []
    real = asyncio.sleep

    async def fake(delay: float, result: object = None) -> object:
        if delay > 0:
            delays.append(delay)
        return await real(0, result)

    monkeypatch.setattr("harness.providers._mock.asyncio.sleep", fake)
    return delays


def _run(opts: dict[str, object], seed: int = 0) -> harness.Result:
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "calculator", "arguments": {"expression": "1+1"}}]}
    ]
    turns.append({"text": "2"})
    return harness.run(
        "1+1?", provider="mock", provider_opts={"turns": turns, **opts}, tools=["calculator"],
        seed=seed,
    )  # fmt: skip


def test_a_fixed_latency_is_slept_on_every_call(slept: list[float]) -> None:
    result = _run({"latency_s": 0.2})
    assert result.text == "2"
    assert slept == [0.2, 0.2]


def test_a_range_and_jitter_are_drawn_in_bounds_and_replay_with_the_seed(
    slept: list[float],
) -> None:
    opts = {"latency_s": [0.1, 0.3], "latency_jitter_s": 0.05}
    _run(opts, seed=1)
    first = list(slept)
    slept.clear()
    _run(opts, seed=1)
    assert slept == first  # the same seed replays the same delays
    assert all(0.1 <= d <= 0.35 for d in first)
    assert len(set(first)) == 2  # one draw per call
    slept.clear()
    _run(opts, seed=2)
    assert slept != first


def test_no_latency_means_no_sleep(slept: list[float]) -> None:
    _run({})
    assert slept == []


@pytest.mark.parametrize(
    ("opts", "message"),
    [
        ({"latency_s": -1}, "latency_s: must be seconds >= 0 or \\[lo, hi\\], got -1"),
        ({"latency_s": "fast"}, "latency_s: must be seconds"),
        ({"latency_s": True}, "latency_s: must be seconds"),
        ({"latency_s": [0.3, 0.1]}, "a range must be \\[lo, hi\\] with 0 <= lo <= hi"),
        ({"latency_s": [0.1]}, "a range must be"),
        ({"latency_s": 0.1, "latency_jitter_s": -0.1}, "latency_jitter_s: must be seconds"),
        ({"latency_jitter_s": 0.1}, "latency_jitter_s: needs latency_s too"),
    ],
)
def test_bad_latency_options_are_config_errors(opts: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        MockProvider.from_opts({"turns": [{"text": "x"}], **opts}, None)


def _suite(tmp_path: Path, mock: str) -> Path:
    path = tmp_path / "lat.yaml"
    path.write_text(
        textwrap.dedent(
            f"""
            suite: lat
            tasks:
              - id: t
                prompt: hi
                expect: {{kind: contains, value: hi}}
                mock: {mock}
            """
        ),
        encoding="utf-8",
    )
    return path


def test_a_suite_mock_block_sets_latency(tmp_path: Path) -> None:
    suite = load_suites([_suite(tmp_path, "{turns: [{text: hi}], latency_s: [0.1, 0.2]}")])[0]
    opts = suite.tasks[0].mock_provider_opts()
    assert opts is not None
    assert opts["latency_s"] == [0.1, 0.2]
    assert MockProvider.from_opts(opts, None).latency == (0.1, 0.2, 0.0)


def test_a_bad_suite_latency_names_the_file_task_and_field(tmp_path: Path) -> None:
    path = _suite(tmp_path, "{turns: [{text: hi}], latency_s: [0.3, 0.2]}")
    with pytest.raises(SuiteError) as info:
        load_suites([path])
    message = str(info.value)
    assert str(path) in message
    assert "task 't'" in message
    assert "mock.latency_s: a range must be [lo, hi]" in message
