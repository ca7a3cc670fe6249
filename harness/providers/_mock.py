"""The scripted in-process provider, for tests and for suites that need exact behaviour.

``provider_opts={"turns": [...], "when_exhausted": "error" | "repeat_last"}``. Each turn is one of

- ``{"text": "..."}``, optionally with ``"thinking"``;
- ``{"tool_calls": [{"name": ..., "arguments": {...}, "id"?: ...}]}`` (``text`` may come too);
- ``{"error": {"status": 401, "message": "bad key"}}`` - raised as a ProviderError mapped like HTTP;

plus optional ``usage`` ({input_tokens, output_tokens, ...}; default: estimated from the request and
reply), ``cost_usd`` (default 0), ``finish_reason`` and ``for`` (``plan | reflect | compact |
structured``). Untagged turns serve main calls in order; a call of another purpose takes the next
turn tagged for it, or a short canned reply when there is none. Every request received is kept in
:attr:`MockProvider.requests` (a copy of its messages), so tests can assert what each mode sent.

``latency_s`` makes every call take that long (seconds, slept with ``asyncio.sleep``), so that
latency-bound runs can be benchmarked offline: a number, or ``[lo, hi]`` for a uniform draw; with
``latency_jitter_s`` a uniform ``[0, jitter]`` is added. Draws are seeded by the request's seed
and the call's number, so a run replays the same delays.
"""

from __future__ import annotations

import asyncio
import functools
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from harness.core._messages import INVALID_JSON_KEY, TokenUsage, ToolCall
from harness.errors import ConfigError, ProviderError
from harness.providers._base import Capabilities, DeltaHandler, Request, Response

__all__ = ["MockProvider", "MockTurn"]

_PURPOSES = ("main", "plan", "reflect", "compact", "structured", "subagent")
_TURN_KEYS = frozenset(
    {"text", "thinking", "tool_calls", "error", "usage", "cost_usd", "finish_reason", "for"}
)
_CANNED = {
    "plan": "Plan: work through the task step by step with the available tools.",
    "reflect": "The last step advanced the goal; continue.",
    "compact": "Earlier turns: the task was started and tools were used.",
    "structured": "{}",
    "subagent": "done",
    "main": "done",
}


@dataclass(slots=True)
class MockTurn:
    purpose: str
    text: str
    thinking: str | None
    tool_calls: tuple[ToolCall, ...]
    error: ProviderError | None
    usage: TokenUsage | None
    cost_usd: float
    finish_reason: str | None


class MockProvider:
    """A scripted provider. ``stream=True`` in provider_opts streams text in word chunks."""

    #: The harness's own code: the kernel awaits ``complete`` directly (kernel._isolated).
    _harness_owned: ClassVar[bool] = True

    def __init__(
        self,
        turns: list[dict[str, Any]] | None = None,
        *,
        when_exhausted: str = "error",
        model: str | None = "mock-model",
        stream: bool = False,
        context_window: int | None = None,
        name: str = "mock",
        latency_s: float | list[float] | tuple[float, float] | None = None,
        latency_jitter_s: float | None = None,
    ) -> None:
        if when_exhausted not in ("error", "repeat_last"):
            raise ConfigError(
                f"provider_opts.when_exhausted: must be 'error' or 'repeat_last', "
                f"got {when_exhausted!r}"
            )
        self.name = name
        self.model = model
        self.latency = _latency(latency_s, latency_jitter_s)
        self.capabilities = _capabilities(stream, context_window)
        self.when_exhausted = when_exhausted
        self.turns = [_parse_turn(t, i) for i, t in enumerate(turns or [])]
        self._queues: dict[str, list[MockTurn]] = {p: [] for p in _PURPOSES}
        for turn in self.turns:
            self._queues[turn.purpose].append(turn)
        self._next: dict[str, int] = dict.fromkeys(_PURPOSES, 0)
        self.requests: list[Request] = []
        self._ids = 0

    @classmethod
    def from_opts(cls, opts: Mapping[str, Any], model: str | None) -> MockProvider:
        known = {
            "turns", "when_exhausted", "stream", "context_window", "base_url", "latency_s",
            "latency_jitter_s",
        }  # fmt: skip
        unknown = set(opts) - known
        if unknown:
            raise ConfigError(
                f"provider_opts: unknown keys for the mock provider: {sorted(unknown)}; "
                f"known: {sorted(known - {'base_url'})}"
            )
        turns = opts.get("turns") or []
        if not isinstance(turns, list):
            raise ConfigError("provider_opts.turns: must be a list of turns")
        return cls(
            turns,
            when_exhausted=opts.get("when_exhausted", "error"),
            model=model or "mock-model",
            stream=bool(opts.get("stream", False)),
            context_window=opts.get("context_window"),
            latency_s=opts.get("latency_s"),
            latency_jitter_s=opts.get("latency_jitter_s"),
        )

    def _take(self, purpose: str) -> MockTurn | None:
        queue = self._queues[purpose]
        i = self._next[purpose]
        if i < len(queue):
            self._next[purpose] = i + 1
            return queue[i]
        if purpose == "main":
            if self.when_exhausted == "repeat_last" and queue:
                return queue[-1]
            raise ProviderError(
                "bad_request",
                f"mock script exhausted: main call {i + 1} but the script has {len(queue)} "
                "untagged turns (add turns, or set when_exhausted: repeat_last)",
            )
        return None

    async def complete(self, request: Request, on_delta: DeltaHandler | None = None) -> Response:
        self.requests.append(_snapshot(request))
        if self.latency is not None:
            await asyncio.sleep(self._delay(request))
        purpose = request.purpose if request.purpose in self._queues else "main"
        turn = self._take(purpose)
        if turn is None:
            turn = MockTurn(purpose, _CANNED[purpose], None, (), None, None, 0.0, None)
        if turn.error is not None:
            raise turn.error
        if on_delta is not None:
            if turn.thinking:
                on_delta("thinking", turn.thinking)
            for chunk in _chunks(turn.text):
                on_delta("content", chunk)
        self._ids += 1
        calls = [
            c if c.id else ToolCall(f"call_{self._ids}_{i}", c.name, c.arguments)
            for i, c in enumerate(turn.tool_calls)
        ]
        usage = turn.usage or TokenUsage(
            input_tokens=_estimate_input(request), output_tokens=max(1, len(turn.text) // 4)
        )
        return Response(
            text=turn.text,
            tool_calls=calls,
            thinking=turn.thinking,
            finish_reason=turn.finish_reason or ("tool_calls" if calls else "stop"),
            usage=usage,
            cost_usd=turn.cost_usd,
            model=self.model,
            id=f"mock-{self._ids}",
        )

    async def aclose(self) -> None:
        return None

    def _delay(self, request: Request) -> float:
        """This call's latency: seeded by the request's seed and the call's number."""
        assert self.latency is not None
        lo, hi, jitter = self.latency
        if lo == hi and not jitter:
            return lo
        rng = random.Random(f"{request.seed}:{len(self.requests)}")
        return rng.uniform(lo, hi) + (rng.uniform(0.0, jitter) if jitter else 0.0)


def _latency(
    value: float | list[float] | tuple[float, float] | None, jitter: float | None
) -> tuple[float, float, float] | None:
    """``(lo, hi, jitter)`` from the ``latency_s`` / ``latency_jitter_s`` options."""
    if value is None:
        if jitter is not None:
            raise ConfigError("provider_opts.latency_jitter_s: needs latency_s too")
        return None
    if isinstance(value, (list, tuple)):
        if len(value) != 2 or not all(_seconds(v) for v in value) or value[0] > value[1]:
            raise ConfigError(
                f"provider_opts.latency_s: a range must be [lo, hi] with 0 <= lo <= hi "
                f"seconds, got {value!r}"
            )
        lo, hi = float(value[0]), float(value[1])
    elif _seconds(value):
        lo = hi = float(value)
    else:
        raise ConfigError(
            f"provider_opts.latency_s: must be seconds >= 0 or [lo, hi], got {value!r}"
        )
    if jitter is not None and not _seconds(jitter):
        raise ConfigError(f"provider_opts.latency_jitter_s: must be seconds >= 0, got {jitter!r}")
    return lo, hi, float(jitter or 0.0)


def _seconds(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 3600


@functools.lru_cache(maxsize=64)
def _capabilities(stream: bool, context_window: int | None) -> Capabilities:
    """Capabilities are immutable: share one per (stream, context_window)."""
    return Capabilities(
        native_tool_calls=True,
        streaming=stream,
        json_mode=True,
        structured_output=True,
        context_window=context_window,
    )


def _snapshot(r: Request) -> Request:
    """A copy of the request whose message list will not change as the run goes on."""
    return Request(
        messages=list(r.messages),
        model=r.model,
        system_prompt=r.system_prompt,
        tools=r.tools,
        tool_choice=r.tool_choice,
        temperature=r.temperature,
        top_p=r.top_p,
        seed=r.seed,
        max_tokens=r.max_tokens,
        stop=r.stop,
        timeout_s=r.timeout_s,
        response_format=r.response_format,
        provider_opts=r.provider_opts,
        metadata=r.metadata,
        purpose=r.purpose,
    )


def _chunks(text: str) -> list[str]:
    if not text:
        return []
    words = text.split(" ")
    return [w + " " for w in words[:-1]] + [words[-1]]


def _estimate_input(request: Request) -> int:
    chars = len(request.system_prompt or "") + sum(len(m.content) for m in request.messages)
    return 8 * len(request.messages) + chars // 4


def _parse_turn(raw: dict[str, Any], index: int) -> MockTurn:
    # Validated fully, but cheaply: this runs for every turn of every mock run.
    if not isinstance(raw, dict):
        raise _bad(index, f"expected a mapping, got {type(raw).__name__}")
    if not raw.keys() <= _TURN_KEYS:
        unknown = sorted(raw.keys() - _TURN_KEYS)
        raise _bad(index, f"unknown keys {unknown}; allowed: {sorted(_TURN_KEYS)}")
    purpose = raw.get("for", "main")
    if purpose not in _PURPOSES:
        raise _bad(index, f"'for' must be one of {', '.join(_PURPOSES)}, got {purpose!r}")
    text = raw.get("text")
    calls_raw = raw.get("tool_calls")
    spec = raw.get("error")
    error = None
    if spec is not None:
        if text is not None or calls_raw is not None:
            raise _bad(index, "an error turn cannot also have text or tool_calls")
        if not isinstance(spec, dict) or not isinstance(spec.get("status"), int):
            raise _bad(index, "error must be {status: int, message: str}")
        error = ProviderError.from_status(spec["status"], str(spec.get("message", "mock error")))
    elif "text" not in raw and "tool_calls" not in raw:
        raise _bad(index, "needs one of 'text', 'tool_calls' or 'error'")
    if calls_raw is not None and not isinstance(calls_raw, list):  # (a float: a TypeError)
        raise _bad(index, f"tool_calls must be a list, got {type(calls_raw).__name__}")
    calls: list[ToolCall] = []
    for j, c in enumerate(calls_raw or ()):
        if not isinstance(c, dict) or not isinstance(c.get("name"), str):
            raise _bad(index, f"tool_calls[{j}] needs a 'name' string")
        args = c.get("arguments", {})
        if isinstance(args, str):
            args = {INVALID_JSON_KEY: args}  # a raw (unparsed) argument string
        elif not isinstance(args, dict):
            raise _bad(index, f"tool_calls[{j}].arguments must be a mapping")
        calls.append(ToolCall(str(c.get("id") or ""), c["name"], dict(args)))
    usage = _usage(raw["usage"], index) if "usage" in raw else None
    cost = raw.get("cost_usd", 0.0)
    if not isinstance(cost, (int, float)) or cost < 0:  # a tuple: faster than int | float
        raise _bad(index, f"cost_usd must be a non-negative number, got {cost!r}")
    if text is None:
        text = ""
    elif not isinstance(text, str):
        raise _bad(index, f"text must be a string, got {type(text).__name__}")
    thinking = raw.get("thinking")
    finish = raw.get("finish_reason")
    for key, value in (("thinking", thinking), ("finish_reason", finish)):
        if value is not None and not isinstance(value, str):
            raise _bad(index, f"{key} must be a string, got {type(value).__name__}")
    return MockTurn(purpose, text, thinking, tuple(calls), error, usage, float(cost), finish)


def _usage(u: Any, index: int) -> TokenUsage:
    try:
        usage = TokenUsage(**{k: int(v) for k, v in dict(u).items()})
    except (TypeError, ValueError) as exc:
        raise _bad(index, f"usage: {exc}") from None
    if (
        min(
            usage.input_tokens,
            usage.output_tokens,
            usage.reasoning_tokens,
            usage.cache_read_tokens,
            usage.cache_write_tokens,
        )
        < 0
    ):
        raise _bad(index, "usage: token counts must be >= 0")
    return usage


def _bad(index: int, message: str) -> ConfigError:
    return ConfigError(f"mock turn {index + 1}: {message}")
