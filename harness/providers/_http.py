"""The HTTP layer shared by the real providers: one pooled ``httpx.AsyncClient`` per provider,
retries with backoff, streaming (SSE and NDJSON), and the HTTP error taxonomy.

- Retries: 429, 5xx, timeouts and transport errors are retried with exponential backoff and
  jitter (``tenacity``), honouring ``Retry-After`` (capped at ``retry_max_wait_s``), at most
  ``max_retries`` times. A streamed call is retried only while nothing has been streamed yet.
- Errors: every failure is a :class:`~harness.errors.ProviderError` with a ``kind``: HTTP status
  (401/403 unauthorized, 408 timeout, 413 or a context-length message context_length_exceeded,
  429 rate_limited, 5xx server_error, other 4xx bad_request), ``timeout``/``transport`` for the
  network, ``invalid_response`` for bodies that are not what the API promises (bad JSON, an HTML
  page from a proxy, a truncated stream).
- Deadline: ``timeout_s`` bounds each read (httpx's timeouts are per operation), so a server
  that keeps a call alive (keep-alive comments while its upstream hangs, a body dripped a byte
  at a time) would hold it for ever; ``deadline_s`` bounds the whole call, retries included.
  Past it the call is a ``timeout`` error, not retried.
- Size: a reply's body is read up to ``MAX_REPLY_BYTES`` (64 MiB; see
  :mod:`harness.providers._bodies`); past that the call is an ``invalid_response``, not
  retried. Of an error reply, the first ``MAX_ERROR_BODY_BYTES`` (1 MiB) give its message.
- ``transport=`` lets a caller route the client through its own httpx transport (the bench
  replays cassettes that way, per cell).
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import math
import re
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import httpx
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    wait_random_exponential,
)

from harness._urls import masked_url
from harness.errors import ProviderError, kind_from_status
from harness.providers._bodies import (
    MAX_ERROR_BODY_BYTES,
    MAX_REPLY_BYTES,
    as_text,
    decode_json,
    ndjson,
    read_capped,
    snippet,
    sse,
    too_big,
)
from harness.providers._fences import tagged
from harness.providers._profiles import DEFAULT_DEADLINE_S

T = TypeVar("T")

__all__ = ["Attempts", "HTTPClient", "RetryPolicy", "error_from_response"]


_RETRYABLE = frozenset({"rate_limited", "server_error", "timeout", "transport"})


@dataclass(slots=True, frozen=True)
class RetryPolicy:
    max_retries: int = 3
    initial_s: float = 0.5
    max_wait_s: float = 30.0


@dataclass(slots=True)
class Attempts:
    """Failed attempts before the call that counted (empty when the first one worked)."""

    errors: list[str] = field(default_factory=list)


#: A URL's ``user:password@`` (the password part is group 2).


class HTTPClient:
    """A pooled async client bound to one base URL, with retries and error mapping."""

    def __init__(
        self,
        base_url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout_s: float = 300.0,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        deadline_s: float | None = DEFAULT_DEADLINE_S,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        #: The address as messages show it: a password in it (``http://u:PASS@host``) is not
        #: printed nor stored in a cell's error (adversary round 17, part B).
        self.shown_url = masked_url(self.base_url)
        self.timeout_s = timeout_s
        self.deadline_s = deadline_s
        self.retry = retry or RetryPolicy()
        self._client = httpx.AsyncClient(
            base_url=self.base_url,
            headers=dict(headers or {}),
            timeout=httpx.Timeout(timeout_s, connect=min(10.0, timeout_s)),
            limits=httpx.Limits(max_connections=32, max_keepalive_connections=8),
            transport=transport,
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    def _retrying(self, attempts: Attempts) -> AsyncRetrying:
        policy = self.retry
        # "Full jitter": a random wait in [0, min(max, initial * 2**n)].
        backoff = wait_random_exponential(multiplier=policy.initial_s, max=policy.max_wait_s)

        def wait(state: RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            if isinstance(exc, ProviderError) and exc.retry_after_s is not None:
                return min(max(exc.retry_after_s, 0.0), policy.max_wait_s)
            return float(backoff(state))

        def retryable(exc: BaseException) -> bool:
            ok = isinstance(exc, ProviderError) and exc.kind in _RETRYABLE
            if ok:
                attempts.errors.append(str(exc))
            return ok

        return AsyncRetrying(
            stop=stop_after_attempt(policy.max_retries + 1),
            wait=wait,
            retry=retry_if_exception(retryable),
            reraise=True,
        )

    async def _with_retries(self, attempts: Attempts, once: Callable[[], Awaitable[T]]) -> T:
        """``once()`` under the retry policy; failed tries land in ``attempts``. A final error
        carries the number of tries made (``ProviderError.attempts``)."""
        tries = 0
        try:
            async for attempt in self._retrying(attempts):
                tries += 1
                with attempt:
                    result = await once()
        except ProviderError as exc:
            exc.attempts = max(tries, 1)  # every try, the failed last one included
            raise
        if len(attempts.errors) > self.retry.max_retries:
            attempts.errors.pop()  # the last error was raised, not retried
        return result

    async def post_json(
        self, path: str, body: Mapping[str, Any], *, timeout_s: float | None = None
    ) -> tuple[dict[str, Any], Attempts]:
        """POST JSON, return the decoded JSON object (retrying as the policy allows)."""
        attempts = Attempts()

        async def once() -> dict[str, Any]:
            return decode_json(*await self._read(await self._send(path, body, timeout_s)))

        try:
            async with asyncio.timeout(self.deadline_s) as clock:
                data = await self._with_retries(attempts, once)
        except TimeoutError:
            if not clock.expired():
                raise
            raise self._past_deadline() from None
        return data, attempts

    def _past_deadline(self) -> ProviderError:
        return ProviderError(
            "timeout",
            f"no complete reply within deadline_s={self.deadline_s:g} s (the whole call, "
            "retries included: the server kept the call alive); raise deadline_s for a slower "
            "model",
        )

    async def stream(
        self,
        path: str,
        body: Mapping[str, Any],
        *,
        framing: Literal["sse", "ndjson"],
        timeout_s: float | None = None,
        attempts: Attempts | None = None,
    ) -> AsyncGenerator[tuple[str | None, str], None]:
        """POST and yield ``(event_name, data)`` per SSE event, or ``(None, line)`` per NDJSON
        line. Retries happen only before the first item is yielded; failed attempts are
        appended to ``attempts``."""
        attempts = attempts if attempts is not None else Attempts()
        loop = asyncio.get_running_loop()
        deadline = None if self.deadline_s is None else loop.time() + self.deadline_s
        try:
            async with asyncio.timeout_at(deadline):
                response = await self._with_retries(
                    attempts, lambda: self._send(path, body, timeout_s)
                )
        except TimeoutError:
            if deadline is None or loop.time() < deadline:
                raise
            raise self._past_deadline() from None
        items = sse(response) if framing == "sse" else ndjson(response)
        try:
            while True:
                try:  # the deadline bounds each wait for an item, never the caller's work
                    async with asyncio.timeout_at(deadline):
                        item = await anext(items)
                except StopAsyncIteration:
                    break
                except TimeoutError:
                    if deadline is None or loop.time() < deadline:
                        raise
                    raise self._past_deadline() from None
                yield item
        except httpx.TimeoutException as exc:
            raise ProviderError("timeout", f"stream stalled: {_describe(exc)}") from exc
        except httpx.TransportError as exc:
            raise ProviderError(
                "transport", f"stream broken off (truncated): {_describe(exc)}"
            ) from exc
        finally:
            await items.aclose()
            await response.aclose()

    @contextlib.contextmanager
    def _transport_errors(self) -> Iterator[None]:
        """httpx's timeouts and transport failures as ProviderError (kind timeout/transport)."""
        try:
            yield
        except httpx.TimeoutException as exc:
            raise ProviderError(
                "timeout", f"no answer from {self.shown_url}: {_describe(exc)}"
            ) from exc
        except httpx.TransportError as exc:
            raise ProviderError("transport", f"{self.shown_url}: {_describe(exc)}") from exc

    async def get_json(self, path: str, *, timeout_s: float = 10.0) -> Any:
        """GET ``path`` once (no retries) and decode its JSON; ProviderError when the server
        cannot be reached, answers an error status or something that is not JSON."""
        timeout = httpx.Timeout(timeout_s, connect=min(10.0, timeout_s))
        with self._transport_errors():
            request = self._client.build_request("GET", path, timeout=timeout)
            response = await self._client.send(request, stream=True)
        _, _, content = await self._read(await self._checked(response))
        try:
            return json.loads(content)
        except (ValueError, RecursionError) as exc:
            raise ProviderError("invalid_response", f"{path}: not JSON") from exc

    async def _send(
        self, path: str, body: Mapping[str, Any], timeout_s: float | None
    ) -> httpx.Response:
        """POST ``body``; the response with its body unread (an error status raised)."""
        timeout = (
            httpx.Timeout(timeout_s, connect=min(10.0, timeout_s))
            if timeout_s is not None
            else httpx.USE_CLIENT_DEFAULT
        )
        with self._transport_errors():
            try:
                request = self._client.build_request("POST", path, json=body, timeout=timeout)
            except UnicodeEncodeError:  # a lone surrogate: see _ascii_json
                request = self._client.build_request(
                    "POST", path, content=_ascii_json(body), timeout=timeout,
                    headers={"Content-Type": "application/json"},
                )  # fmt: skip
            response = await self._client.send(request, stream=True)
        return await self._checked(response)

    async def _checked(self, response: httpx.Response) -> httpx.Response:
        """``response``, or its error status raised with the first
        :data:`MAX_ERROR_BODY_BYTES` of its body as the message (the response closed)."""
        if response.status_code < 400:
            return response
        content = b""
        try:
            content, _ = await read_capped(response, MAX_ERROR_BODY_BYTES)
        except httpx.HTTPError:
            pass
        finally:
            await response.aclose()
        raise _error_from(response, as_text(response, content))

    async def _read(self, response: httpx.Response) -> tuple[int, str, bytes]:
        """The status, content type and body of a response (closed after), its body at most
        :data:`MAX_REPLY_BYTES`."""
        try:
            with self._transport_errors():
                content, over = await read_capped(response, MAX_REPLY_BYTES)
        finally:
            await response.aclose()
        if over:
            raise too_big(response.status_code)
        return response.status_code, response.headers.get("content-type", ""), content


def _ascii_json(body: Mapping[str, Any]) -> bytes:
    """``body`` as JSON with every non-ASCII character escaped: a reply may spell a lone
    surrogate (JSON's ``\\ud800``, which Python keeps), and a request echoing it back cannot
    be UTF-8 as httpx writes it: every later call of the run failed, ``provider crashed:
    UnicodeEncodeError`` (a stream: ``unexpected stream shape``; adversary round 21, part A).
    Escaped, it is sent as the server spelt it."""
    return json.dumps(body, separators=(",", ":"), allow_nan=False).encode("ascii")


def _describe(exc: BaseException) -> str:
    """``Type: message``; an empty message (httpx's ReadError) is taken from the cause chain,
    but for the event loop's cancel that ends a wait at its deadline (anyio's ``Cancelled via
    cancel scope 7f5c4e65b7e0; reason: deadline exceeded``: a memory address in every timed
    out cell's error and pre-flight warning; adversary round 20, part A)."""
    name = type(exc).__name__
    cause: BaseException | None = exc
    for _ in range(8):
        if cause is None or isinstance(cause, asyncio.CancelledError):
            break
        if str(cause):
            if cause is exc:
                return f"{name}: {cause}"
            return f"{name}: {type(cause).__name__}: {cause}"
        cause = cause.__cause__ or cause.__context__
    return name


_TITLE_OPEN = re.compile(r"<title>", re.IGNORECASE)
_TITLE_CLOSE = re.compile(r"</title>", re.IGNORECASE)


def _title(text: str) -> str | None:
    """What ``<title>(.*?)</title>`` finds first (see :func:`tagged`: linear)."""
    return next((body for _, body in tagged(text, _TITLE_OPEN, _TITLE_CLOSE)), None)


def error_from_response(response: httpx.Response) -> ProviderError:
    """Map an HTTP error response to a ProviderError, with the provider's own message."""
    try:
        text = response.text
    except httpx.ResponseNotRead:
        text = ""
    return _error_from(response, text)


def _error_from(response: httpx.Response, text: str) -> ProviderError:
    status = response.status_code
    message = _error_message(text, response.headers.get("content-type", ""))
    error = ProviderError(
        kind_from_status(status, message),
        f"{message}",
        status=status,
        retry_after_s=_retry_after(response.headers.get("retry-after")),
    )
    return error


def _error_message(text: str, ctype: str) -> str:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        data = None
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, str):
            return err  # Ollama: {"error": "..."}
        if isinstance(err, dict):
            msg = str(err.get("message") or err.get("msg") or "")
            code = err.get("code") or err.get("type")
            if code == "context_length_exceeded" and "context" not in msg.lower():
                msg = f"{msg} (context length exceeded)"
            return f"{msg} [{code}]" if code and msg else msg or json.dumps(err)[:300]
    if "html" in ctype.lower() or text.lstrip().lower().startswith(("<!doctype", "<html")):
        title = _title(text)
        shown = title.strip() if title is not None else snippet(text)
        return f"HTML error page (a proxy or gateway answered): {shown}"
    return snippet(text) or "(empty body)"


def _retry_after(value: str | None) -> float | None:
    """Seconds a ``Retry-After`` header asks for, or None when it says nothing usable: ``nan``
    made the retry wait until the call's deadline, and a date whose numbers overflow (``Mon,
    01 Jan 2000 99999999999999999999:00:00 GMT``) raised ``OverflowError`` out of the
    provider."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError, OverflowError):
            return None
    return None if math.isnan(seconds) else max(seconds, 0.0)
