"""A reply's body decoded by its ``Content-Encoding`` a bounded step at a time (used by
:mod:`harness.providers._bodies`).

httpx decodes each chunk read from the network whole: a gzip layer grows 64 KiB by about a
thousand times, a brotli one without bound, and stacked layers (``gzip, gzip``) multiply. A
687-byte reply of ``Content-Encoding: gzip, gzip`` holding 300 MB of spaces took the process
to 660 MB before the 64 MiB reply cap was checked (3 GB from 7 KB: the machine's memory);
adversary round 13, part A. Here each layer gives at most :data:`STEP` bytes at a time, so the
reader's cap is checked before more is made, and more than one layer is refused.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Iterator
from typing import Any, Protocol

import httpx

from harness.errors import ProviderError

__all__ = ["STEP", "decoded_bytes", "decodes_past"]

#: The most one decoding step gives (the reader checks its cap between steps).
STEP = 2**20


class _Layer(Protocol):
    def feed(self, data: bytes) -> Iterator[bytes]: ...

    def end(self) -> Iterator[bytes]: ...


class _Zlib:
    """gzip or deflate (zlib-wrapped, or raw as some servers send it, as httpx accepts)."""

    def __init__(self, wbits: int, *, raw_fallback: bool = False) -> None:
        self._d = zlib.decompressobj(wbits)
        self._fallback = raw_fallback
        self._started = False

    def feed(self, data: bytes) -> Iterator[bytes]:
        while data:
            try:
                out = self._d.decompress(data, STEP)
            except zlib.error as exc:
                if self._fallback and not self._started:  # raw deflate, no zlib header
                    self._d, self._fallback = zlib.decompressobj(-zlib.MAX_WBITS), False
                    continue
                raise httpx.DecodingError(str(exc)) from None
            self._started = True
            data = self._d.unconsumed_tail
            if out:
                yield out

    def end(self) -> Iterator[bytes]:
        try:
            out = self._d.flush(STEP)
        except zlib.error as exc:
            raise httpx.DecodingError(str(exc)) from None
        if out:
            yield out


class _Brotli:
    def __init__(self, module: Any) -> None:
        self._d = module.Decompressor()
        self._error = module.error

    def feed(self, data: bytes) -> Iterator[bytes]:
        try:
            out = self._d.process(data, output_buffer_limit=STEP)
            while True:
                if out:
                    yield out
                if self._d.can_accept_more_data() or self._d.is_finished():
                    return
                out = self._d.process(b"", output_buffer_limit=STEP)
        except self._error as exc:
            raise httpx.DecodingError(str(exc)) from None

    def end(self) -> Iterator[bytes]:
        return iter(())


def _layer(encoding: str) -> _Layer | None:
    if encoding in ("gzip", "x-gzip"):
        return _Zlib(zlib.MAX_WBITS | 16)
    if encoding == "deflate":
        return _Zlib(zlib.MAX_WBITS, raw_fallback=True)
    if encoding == "br":
        try:
            import brotli
        except ImportError:
            brotli = None
        if brotli is not None and hasattr(brotli.Decompressor, "can_accept_more_data"):
            return _Brotli(brotli)
    return None  # identity, or one httpx would not decode either: the bytes as they came


def _encodings(header: str, status: int | None) -> list[str]:
    """The encodings a ``Content-Encoding`` header names (``identity`` left out); more than one
    is refused."""
    names = [n.strip().lower() for n in header.split(",") if n.strip()]
    names = [n for n in names if n != "identity"]
    if len(names) > 1:
        raise ProviderError(
            "invalid_response",
            f"the reply's Content-Encoding {header!r} stacks {len(names)} encodings; the "
            "harness decodes one (gzip, deflate or br)",
            status=status,
        )
    return names


def decodes_past(header: str, body: bytes, limit: int, status: int | None) -> bool:
    """Whether ``body`` decodes by its ``Content-Encoding`` ``header`` to more than ``limit``
    bytes: counted a :data:`STEP` at a time, never held whole, stopped at the limit. A body no
    layer here decodes (identity, an unknown encoding) counts as it is; a corrupt one as far as
    it decodes (the reader says what is wrong with it). Stacked encodings are refused as
    :func:`decoded_bytes` refuses them. For a transport that holds a reply's body whole and
    still encoded (the cassette recorder)."""
    names = _encodings(header, status)
    layer = _layer(names[0]) if names else None
    if layer is None:
        return len(body) > limit
    size = 0
    try:
        for piece in layer.feed(body):
            size += len(piece)
            if size > limit:
                return True
        size += sum(len(piece) for piece in layer.end())
    except httpx.DecodingError:
        return False
    return size > limit


async def decoded_bytes(response: httpx.Response) -> AsyncIterator[bytes]:
    """The body of ``response`` (opened with ``stream=True``), decoded by its
    ``Content-Encoding`` in pieces of at most :data:`STEP` bytes."""
    names = _encodings(response.headers.get("content-encoding", ""), response.status_code)
    try:
        content = response.content  # read already (a transport's own reply): decoded by httpx
    except httpx.ResponseNotRead:
        pass
    else:
        yield content
        return
    layer = _layer(names[0]) if names else None
    if layer is None and names and names[0] == "br":  # no streaming brotli here: httpx decodes
        async for piece in response.aiter_bytes():  # (brotlicffi, an old brotli), unbounded
            yield piece
        return
    async for raw in response.aiter_raw():
        if layer is None:
            yield raw
            continue
        for piece in layer.feed(raw):
            yield piece
    if layer is not None:
        for piece in layer.end():
            yield piece
