"""Reading a reply's body for :mod:`harness.providers._http`: bounded in size, split into lines,
framed as SSE events or NDJSON lines, decoded as a JSON object.

A reply is read up to :data:`MAX_REPLY_BYTES` (after its content-encoding is decoded, a
bounded step at a time: :mod:`harness.providers._decoding`) and a
stream up to as many characters; past that the call is an ``invalid_response`` (a server
sending without end held a cell until ``deadline_s`` and grew its memory all the while). The
line reader is the harness's own because httpx's ``aiter_lines`` keeps a line without end whole.
"""

from __future__ import annotations

import codecs
import json
import math
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import httpx

from harness.errors import ProviderError
from harness.providers._decoding import decoded_bytes

__all__ = [
    "MAX_ERROR_BODY_BYTES",
    "MAX_REPLY_BYTES",
    "all_finite",
    "as_text",
    "decode_json",
    "lines",
    "ndjson",
    "read_capped",
    "snippet",
    "sse",
    "too_big",
]

#: The most a reply's body may hold, in bytes once decoded (a stream: in characters).
MAX_REPLY_BYTES = 64 * 2**20
#: How much of an error reply's body is read for its message.
MAX_ERROR_BODY_BYTES = 2**20


async def read_capped(response: httpx.Response, limit: int) -> tuple[bytes, bool]:
    """At most ``limit`` bytes of the (decoded) body, and whether there was more."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in decoded_bytes(response):
        if size + len(chunk) > limit:
            chunks.append(chunk[: limit - size])
            return b"".join(chunks), True
        size += len(chunk)
        chunks.append(chunk)
    return b"".join(chunks), False


def too_big(status: int | None) -> ProviderError:
    return ProviderError(
        "invalid_response",
        f"the reply is over {MAX_REPLY_BYTES // 2**20:,} MiB; stopped reading it (a server "
        "sending without end?)",
        status=status,
    )


def as_text(response: httpx.Response, content: bytes) -> str:
    try:
        return content.decode(response.charset_encoding or "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know
        return content.decode("utf-8", errors="replace")


def decode_json(status: int, ctype: str, content: bytes) -> dict[str, Any]:
    try:
        data = json.loads(content)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise ProviderError(
            "invalid_response",
            f"HTTP {status} with a body that is not JSON ({ctype or 'no type'}): "
            f"{snippet(content.decode('utf-8', errors='replace'))}",
            status=status,
        ) from None
    if not isinstance(data, dict):
        raise ProviderError(
            "invalid_response",
            f"expected a JSON object, got {type(data).__name__}: "
            f"{snippet(content.decode('utf-8', errors='replace'))}",
            status=status,
        )
    return data


async def _texts(response: httpx.Response) -> AsyncIterator[str]:
    """The body as text, a decoded piece at a time (its charset, else UTF-8; as httpx's
    ``aiter_text``, which decoded each network chunk's content-encoding whole). UTF-8 drops a
    byte-order mark that starts the body, as SSE's decoding does (and ``json.loads`` of a
    whole body): a stream starting with one lost its first event (``\ufeffdata: ...`` is no
    ``data`` field), the reply's text cut short without a word (adversary round 14, part A)."""
    try:
        codec = codecs.lookup(response.charset_encoding or "utf-8").name
    except LookupError:  # a charset Python does not know
        codec = "utf-8"
    decoder = codecs.getincrementaldecoder("utf-8-sig" if codec == "utf-8" else codec)("replace")
    async for chunk in decoded_bytes(response):
        text = decoder.decode(chunk)
        if text:
            yield text
    text = decoder.decode(b"", final=True)
    if text:
        yield text


async def lines(response: httpx.Response) -> AsyncGenerator[str, None]:
    """The body's lines (``\\n``, ``\\r\\n`` or ``\\r`` ends one), at most
    :data:`MAX_REPLY_BYTES` characters in all: httpx's ``aiter_lines`` kept a line without end
    whole in memory."""
    seen = 0
    pieces: list[str] = []  # the line being read (a long line is joined once)
    held_cr = False  # a chunk ended in CR: the next may start with its LF
    async for text in _texts(response):
        seen += len(text)
        if seen > MAX_REPLY_BYTES:
            raise too_big(response.status_code)
        if held_cr:
            text = "\r" + text
        held_cr = text.endswith("\r")
        if held_cr:
            text = text[:-1]
        *ended, rest = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        if ended:
            ended[0] = "".join([*pieces, ended[0]])
            pieces = []
            for line in ended:
                yield line
        if rest:
            pieces.append(rest)
    if pieces or held_cr:
        yield "".join(pieces)


async def sse(response: httpx.Response) -> AsyncGenerator[tuple[str | None, str], None]:
    """A minimal SSE reader (event/data fields; comments and ids ignored)."""
    event: str | None = None
    data: list[str] = []
    async for line in lines(response):
        if line == "":
            if data:
                yield event, "\n".join(data)
            event, data = None, []
        elif line.startswith(":"):
            continue
        else:
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "event":
                event = value
            elif name == "data":
                data.append(value)
    if data:
        yield event, "\n".join(data)


async def ndjson(response: httpx.Response) -> AsyncGenerator[tuple[str | None, str], None]:
    """``(None, line)`` per non-blank NDJSON line."""
    async for line in lines(response):
        if line.strip():
            yield None, line


def snippet(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


def all_finite(value: Any) -> bool:
    """Whether ``value`` (a decoded JSON value) holds no ``NaN`` or infinite number. Python's
    ``json`` reads ``NaN`` and ``Infinity``, which JSON has not: a tool call's arguments given
    as an object holding one (Anthropic's ``input``, Ollama's ``arguments``) were taken, and
    every later request echoing them could not be written (``provider crashed: ValueError:
    Out of range float values are not JSON compliant``; adversary round 21, part A)."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            return False
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return True
