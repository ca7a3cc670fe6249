"""The base of the real (HTTP) providers: one profile, one pooled client, one wire format.

A subclass names its ``path`` and stream ``framing`` and implements four translations:
``headers(api_key)``, ``build_body(request, stream)``, ``parse(data)`` (a JSON response to a
:class:`Response`) and ``stream_state()`` (an accumulator fed each streamed event that yields text
deltas and builds the final Response). Everything else is shared here: text-tagged tool calls for
models without native tool calling, retries and errors (:mod:`harness.providers._http`), and cost
(:mod:`harness.providers._pricing`).
"""

from __future__ import annotations

import contextlib
import dataclasses
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Literal, Protocol

import httpx

from harness.core._messages import Message
from harness.errors import ProviderError
from harness.providers._base import Capabilities, DeltaHandler, Request, Response
from harness.providers._http import Attempts, HTTPClient, RetryPolicy
from harness.providers._pricing import check_price_as
from harness.providers._profiles import Example, ProviderProfile

__all__ = ["ChatProvider", "StreamState"]

#: What a parser raises when a body has an unexpected shape.
_SHAPE_ERRORS = (KeyError, IndexError, TypeError, ValueError, AttributeError)


class StreamState(Protocol):
    """Accumulates one streamed response."""

    def feed(self, event: str | None, data: str, on_delta: DeltaHandler) -> None:
        """Take one SSE event (name, data) or NDJSON line (None, line); emit text deltas."""

    def finish(self) -> Response:
        """The complete Response; raises ProviderError("invalid_response") if the stream was
        cut short (no terminal event)."""


class ChatProvider(ABC):
    """A provider speaking one HTTP wire format for one profile."""

    path: ClassVar[str]
    #: Where the server lists its models (GET; the live pre-flight of ``harness run``).
    models_path: ClassVar[str | None] = None
    framing: ClassVar[Literal["sse", "ndjson"]]
    #: The wire format takes a JSON Schema for the reply (``response_format``).
    structured_output: ClassVar[bool] = False

    def __init__(
        self,
        profile: ProviderProfile,
        model: str | None,
        *,
        base_url: str | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        stream: bool | None = None,
        timeout_s: float | None = None,
        max_retries: int | None = None,
        retry_initial_s: float | None = None,
        context_window: int | None = None,
        deadline_s: float | None = None,
    ) -> None:
        self.profile = profile
        self.name = profile.name
        self.model = model
        api_key = profile.api_key()
        check_price_as(profile)
        self.capabilities = Capabilities(
            native_tool_calls=profile.tool_calls == "native",
            streaming=profile.stream if stream is None else stream,
            json_mode=True,
            structured_output=self.structured_output,
            context_window=context_window or profile.context_window,
        )
        self.http = HTTPClient(
            profile.resolved_base_url(base_url),
            headers={**self.headers(api_key), **profile.headers},
            timeout_s=timeout_s or profile.timeout_s,
            retry=RetryPolicy(
                max_retries=profile.max_retries if max_retries is None else max_retries,
                initial_s=profile.retry_initial_s if retry_initial_s is None else retry_initial_s,
            ),
            transport=transport,
            deadline_s=deadline_s or profile.deadline_s,
        )
        self._own_transport = transport is None or type(transport).__module__.startswith("harness.")

    @property
    def _harness_owned(self) -> bool:
        """The harness's own code: the kernel awaits ``complete`` directly (kernel._isolated),
        unless it calls an httpx transport given in ``provider_opts``, a plug-in's code in the
        run's task: one that cancelled that task lost the finished run's Result
        (``harness.run`` raised ``CancelledError``; adversary round 21, part A)."""
        return self._own_transport

    @abstractmethod
    def headers(self, api_key: str | None) -> dict[str, str]: ...

    @abstractmethod
    def build_body(self, request: Request, *, stream: bool) -> dict[str, Any]: ...

    @abstractmethod
    def parse(self, data: dict[str, Any]) -> Response: ...

    @abstractmethod
    def stream_state(self) -> StreamState: ...

    async def complete(self, request: Request, on_delta: DeltaHandler | None = None) -> Response:
        from harness.providers import _text_tools as text_tools
        from harness.providers._pricing import price_usage

        text_mode = not self.capabilities.native_tool_calls and bool(request.tools)
        profile = self.profile
        examples = (*profile.examples, *map(Example.model_validate, request.examples))
        shots = (
            text_tools.example_messages(examples, [t.name for t in request.tools or ()])
            if examples and request.tools
            else []
        )
        if text_mode:
            request = text_tools.prepare_request(
                request, fmt=profile.text_tool_format, examples=shots
            )
        elif not self.capabilities.native_tool_calls and any(
            m.role == "tool" or m.tool_calls for m in request.messages
        ):
            # A tool-less call (a plan, a critique) in a conversation that used tools: the
            # calls and results still reach the model, written the same way as in tool turns.
            request = dataclasses.replace(
                request,
                messages=text_tools.rewrite_history(request.messages, fmt=profile.text_tool_format),
            )
        elif shots:
            request = dataclasses.replace(
                request, messages=[m for shot in shots for m in shot] + list(request.messages)
            )
        if not text_mode and request.messages and request.messages[-1].role == "assistant":
            # The kernel asks for the model's next turn after a plan or a critique; a chat API
            # would read a trailing assistant message as a prefill to continue (Anthropic
            # messages, llama-server's chat completions), so the turn is made explicit.
            request = dataclasses.replace(
                request, messages=[*request.messages, Message("user", text_tools.NEXT_TURN)]
            )
        if profile.stop:
            extra = [s for s in profile.stop if s not in (request.stop or ())]
            request = dataclasses.replace(request, stop=[*(request.stop or ()), *extra])
        request = _apply_profile_sampling(request, profile)
        if request.model is None:
            request.model = self.model
        # Text-mode replies hold raw tool-call blocks: do not stream them as visible content.
        stream = on_delta is not None and self.capabilities.streaming and not text_mode
        body = self.build_body(request, stream=stream)
        attempts = Attempts()
        if stream:
            assert on_delta is not None
            state = self.stream_state()
            try:
                events = self.http.stream(
                    self.path,
                    body,
                    framing=self.framing,
                    timeout_s=request.timeout_s,
                    attempts=attempts,
                )
                # aclosing: when feed() raises (an error event), the response is closed now,
                # not whenever the suspended generator is garbage-collected.
                async with contextlib.aclosing(events):
                    async for event, chunk in events:
                        state.feed(event, chunk, on_delta)
                response = state.finish()
            except ProviderError:
                raise
            except _SHAPE_ERRORS as exc:
                raise ProviderError(
                    "invalid_response",
                    f"{self.name}: unexpected stream shape ({type(exc).__name__}: {exc})",
                ) from None
        else:
            data, attempts = await self.http.post_json(self.path, body, timeout_s=request.timeout_s)
            try:
                response = self.parse(data)
            except ProviderError:
                raise
            except _SHAPE_ERRORS as exc:
                raise ProviderError(
                    "invalid_response",
                    f"{self.name}: unexpected response shape ({type(exc).__name__}: {exc})",
                ) from None
        if profile.bare_json_calls and request.tools and not text_mode:
            _read_bare_calls(response, request)
        if text_mode:
            text_tools.finish_response(response, profile.text_tool_format)
        elif not self.capabilities.native_tool_calls and response.text:
            response.text = text_tools.drop_run_on(response.text, profile.text_tool_format)
        response.retries = attempts.errors
        response.cost_usd = price_usage(
            self.profile, response.model or request.model, response.usage
        )
        return response

    async def aclose(self) -> None:
        await self.http.aclose()

    def __repr__(self) -> str:
        cls = type(self).__name__
        return f"{cls}(name={self.name!r}, model={self.model!r}, base_url={self.http.shown_url!r})"


def _apply_profile_sampling(request: Request, profile: ProviderProfile) -> Request:
    """The request under the profile's fixed temperature (greedy: no seed) and with its default
    ``max_tokens`` when the request sets none."""
    changes: dict[str, Any] = {}
    if profile.temperature is not None:
        changes["temperature"] = profile.temperature
        if profile.temperature == 0:
            changes["seed"] = None
    if request.max_tokens is None and profile.max_tokens is not None:
        changes["max_tokens"] = profile.max_tokens
    return dataclasses.replace(request, **changes) if changes else request


def _read_bare_calls(response: Response, request: Request) -> None:
    """A reply that is only tool calls in bare JSON becomes those calls, marked repaired."""
    if response.tool_calls or not response.text:
        return
    from harness.providers._bare_calls import parse_bare_calls

    calls = parse_bare_calls(response.text, {t.name for t in request.tools or ()})
    if calls:
        response.tool_calls = calls
        response.text = ""
        response.finish_reason = "tool_calls"
        response.repaired = f"bare_json: {len(calls)} call(s) without chat-format markup"
