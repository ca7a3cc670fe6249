"""Per-cell VCR cassettes: an httpx transport bound to one vcrpy ``Cassette`` file.

``vcr.use_cassette`` patches httpx for the whole process, so concurrent matrix cells would record
into and replay from each other's cassettes. Here each cell's provider client gets its own
:class:`CassetteTransport` (``provider_opts={"transport": ...}``); vcrpy supplies the storage
(``Cassette``, its YAML serializer, its persister protocol) and the record-mode rules, and only
this cell's requests ever reach it.

Record modes (vcrpy's): ``none`` (the default: strict replay, never touches the network),
``once`` (record only when the file does not exist yet, else replay strictly), ``new_episodes``
(replay what matches, record the rest), ``all`` (always record; on save the new interactions
replace the loaded ones they match, the others are kept unless ``drop_unused_requests``).
Each recorded interaction plays at most once, in recorded order, so a recorded ``429`` then
``200`` retry replays as ``429`` then ``200`` (no ``allow_playback_repeats``).

Drift: with ``tolerate_drift=True`` (the bench's replays), a request that matches no recording
but has the method, path and query of one not yet played gets that recording's answer (the first
in recorded order) instead of a :class:`CassetteMiss`; it is counted in ``drift`` and described
in ``drift_notes`` (where its body differs). Differences that matching already ignores (volatile
fields, durations such as pytest's "in 0.08s") are not drift.

How requests are matched (method, path, query and normalised JSON body) and what is scrubbed
before anything is stored: see :mod:`harness.cassettes._store`.

Streaming (SSE, NDJSON): when recording, the full body is read before the client sees it (the
deltas then arrive at once), stored as one string, and replayed byte-for-byte as an httpx stream,
so a replayed run parses exactly the recorded events. Failed connections (timeouts, resets) are
not recorded: only HTTP responses are.

The cassette is saved on ``aclose()`` (the provider closes its client at the end of a run;
not when the run was cancelled: a conversation cut short is never written) or
:meth:`CassetteTransport.save`, atomically (a temporary file, then ``os.replace``); ``none``
never writes. A request without a recorded answer raises :class:`CassetteMiss` (a
:class:`~harness.errors.HarnessError`, so the HTTP layer does not retry it) naming the file and
the command that re-records it; an unreadable file raises :class:`CassetteCorrupt` when the
transport is created.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx
from vcr.record_mode import RecordMode  # type: ignore[import-untyped]
from vcr.request import Request as VcrRequest  # type: ignore[import-untyped]

from harness.cassettes import _yaml as yamlserializer
from harness.cassettes._store import (
    DROPPED_HEADERS,
    SECRET_HEADERS,
    SECRET_QUERY,
    VOLATILE_FIELDS,
    CassetteCorrupt,
    CassetteError,
    CassetteMiss,
    IndexedCassette,
    Persister,
    Scrubber,
    drifted_answer,
    miss_reason,
)
from harness.errors import ConfigError, ProviderError
from harness.providers._bodies import MAX_REPLY_BYTES
from harness.providers._decoding import decodes_past

__all__ = [
    "DROPPED_HEADERS",
    "RECORD_MODES",
    "SECRET_HEADERS",
    "SECRET_QUERY",
    "VOLATILE_FIELDS",
    "CassetteCorrupt",
    "CassetteError",
    "CassetteMiss",
    "CassetteTransport",
    "cassette_path",
    "profile_secrets",
]

RECORD_MODES = ("none", "once", "new_episodes", "all")


def cassette_path(
    root: str | os.PathLike[str], suite: str, provider: str, mode: str, task: str, epoch: int
) -> Path:
    """``root/suite/provider/mode/<task>.e<epoch>.yaml``; ``provider`` is the ``--providers``
    name as given. A ``/`` or ``\\`` in a name becomes ``%2F`` / ``%5C``; nothing else changes."""
    if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 0:
        raise ConfigError(f"cassette epoch: expected an integer >= 0, got {epoch!r}")
    names = {"suite": suite, "provider": provider, "mode": mode, "task": task}
    safe = {what: _safe_name(what, name) for what, name in names.items()}
    return (
        Path(root)
        / safe["suite"]
        / safe["provider"]
        / safe["mode"]
        / f"{safe['task']}.e{epoch}.yaml"
    )


def _safe_name(what: str, name: str) -> str:
    if not name or name in (".", "..") or "\x00" in name:
        raise ConfigError(f"cassette {what}: {name!r} cannot name a file or folder")
    safe = name.replace("/", "%2F").replace("\\", "%5C")
    if (size := len(safe.encode("utf-8", "surrogatepass"))) > _MAX_NAME_BYTES:  # a provider
        raise ConfigError(  # named with 300 characters: each recording lost after the call,
            f"cassette {what}: {name[:60]!r}... is {size} bytes long, too long to name a "
            f"file or folder (at most {_MAX_NAME_BYTES}); give it a shorter name"
        )  # "File name too long" (adversary round 21, part B)
    return safe


#: The longest name of a cassette's file or folder: the file system's 255 bytes, less the
#: epoch's suffix and the temporary name a recording is written under first.
_MAX_NAME_BYTES = 200


def profile_secrets(spec: str) -> list[str]:
    """The secret values of the profile named by ``spec`` (``NAME[:MODEL]``): its declared
    header values, its key, and every ``*_KEY`` / ``*_TOKEN`` / ``*_SECRET`` variable's value
    (see :mod:`harness.cassettes._secrets`); pass them as ``secrets=`` so they are scrubbed
    wherever they appear."""
    from harness.cassettes._secrets import secret_values

    return secret_values([spec])


# --- the transport ---------------------------------------------------------------------------


class CassetteTransport(httpx.AsyncBaseTransport):
    """An httpx transport that records to and replays from one cassette file (one matrix cell).

    ``rerecord_hint`` is the command a :class:`CassetteMiss` tells the user to run;
    ``secrets`` are values scrubbed wherever they appear; while recording, requests to
    ``ignore_hosts`` (exact ``host:port``) go to the network unrecorded; a replay (record mode
    ``none``) never sends anything to the network;
    ``real_transport`` is what records (default: a new ``httpx.AsyncHTTPTransport``).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        record_mode: str = "none",
        rerecord_hint: str | None = None,
        secrets: Iterable[str] = (),
        ignore_hosts: Iterable[str] = (),
        volatile_fields: Sequence[str] = VOLATILE_FIELDS,
        drop_unused_requests: bool = False,
        real_transport: httpx.AsyncBaseTransport | None = None,
        metadata: Mapping[str, Any] | None = None,
        tolerate_drift: bool = False,
    ) -> None:
        if record_mode not in RECORD_MODES:
            raise ConfigError(
                f"record_mode: {record_mode!r} is not one of {', '.join(RECORD_MODES)}"
            )
        self.path = Path(path)
        self.record_mode = record_mode
        self.rerecord_hint = rerecord_hint
        self.ignore_hosts = frozenset(h.lower() for h in ignore_hosts)
        self.played = self.recorded = self.misses = self.passed_through = 0
        self.tolerate_drift = tolerate_drift
        #: Replayed requests that matched no recording but got the next one to their endpoint.
        self.drift = 0
        self.drift_notes: list[str] = []
        self._real = real_transport
        self._closed = False
        #: Why the last save failed (a full disk): the recording of this cassette is lost.
        self.save_error: OSError | None = None
        #: Written beside the interactions when this cassette records (e.g. whether the server
        #: honours seeds); kept as loaded otherwise.
        self.metadata = dict(metadata or {})
        self._scrub = Scrubber(secrets)
        try:
            self._cassette = IndexedCassette.load(
                path=str(self.path),
                serializer=yamlserializer,
                persister=Persister,
                record_mode=RecordMode(record_mode),
                before_record_request=self._scrub.request,
                before_record_response=self._scrub.response,
                drop_unused_requests=drop_unused_requests,
                volatile=volatile_fields,
            )
        except CassetteError:
            raise
        except Exception as exc:  # a hook or vcrpy choking on the content
            raise CassetteCorrupt(
                f"cassette {self.path}: cannot be loaded: {type(exc).__name__}: {exc}"
            ) from None
        self.existed = bool(self._cassette.rewound)

    # --- counters and state ------------------------------------------------------------------

    @property
    def normalisations(self) -> int:
        """How many request bodies were parsed and normalised (once per stored request at
        load, once per request sent)."""
        return int(self._cassette.normalisations)

    @property
    def interactions(self) -> int:
        return len(self._cassette)

    @property
    def unplayed(self) -> list[int]:
        """Indexes of loaded interactions that were not replayed."""
        counts = self._cassette.play_counts
        return [i for i in range(self._cassette._loaded_count) if not counts[i]]

    # --- httpx -------------------------------------------------------------------------------

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        port = url.port or (443 if url.scheme == "https" else 80)
        # Replay (record mode none) never reaches the network, whatever is ignored.
        if self.record_mode != "none" and f"{url.host.lower()}:{port}" in self.ignore_hosts:
            self.passed_through += 1
            return await self._real_transport().handle_async_request(request)
        body = await request.aread()
        raw = VcrRequest(request.method, str(url), body, dict(request.headers.items()))
        cassette = self._cassette
        vcr_request = self._scrub.request(raw)
        cassette.key(vcr_request)
        if cassette.can_play_response_for(vcr_request):
            self.played += 1
            return _replayed(cassette.play_response(vcr_request))
        if cassette.write_protected:
            drifted = drifted_answer(cassette, vcr_request) if self.tolerate_drift else None
            if drifted is not None:
                index, note = drifted
                cassette.play_counts[index] += 1
                self.played += 1
                self.drift += 1
                self.drift_notes.append(note)
                return _replayed(cassette.data[index][1])
            self.misses += 1
            raise CassetteMiss(self._miss_message(vcr_request))
        response = await self._real_transport().handle_async_request(request)
        stream = response.stream
        assert isinstance(stream, httpx.AsyncByteStream)
        try:
            content = await _whole(stream, response.status_code)
        finally:
            await stream.aclose()
        _decodable(response, content)
        cassette.append(vcr_request, _stored(response, content))
        cassette._metadata.update(self.metadata)
        self.recorded += 1
        extensions = {k: v for k, v in response.extensions.items() if k != "network_stream"}
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=httpx.ByteStream(content),
            extensions=extensions,
        )

    def save(self) -> None:
        """Write the cassette if it has new interactions (never in record mode ``none``)."""
        if self.record_mode != "none":
            self._cassette._save()

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        task = asyncio.current_task()
        try:
            # A conversation cut short by a cancel (Ctrl-C, a stopped recording, a cell's
            # timeout) is never saved: a replay of it would miss its later requests, and a
            # recording that resumes records the whole cell again.
            if task is None or not task.cancelling():
                try:
                    await asyncio.to_thread(self.save)
                except OSError as exc:  # a full disk, say: the recording is lost
                    self.save_error = exc
                    raise
        finally:
            if self._real is not None:
                real, self._real = self._real, None
                await real.aclose()

    def reopen(self) -> None:
        """Take requests again after :meth:`aclose` (a cell's judge after its run); the next
        ``aclose`` saves again, with the new interactions."""
        self._closed = False

    def _real_transport(self) -> httpx.AsyncBaseTransport:
        if self._real is None:
            self._real = httpx.AsyncHTTPTransport(
                limits=httpx.Limits(max_connections=32, max_keepalive_connections=8)
            )
        return self._real

    def _miss_message(self, request: Any) -> str:
        if not self.existed:
            what = "does not exist (or is empty)"
        else:
            what = f"has no unplayed answer for {request.method} {request.path}"
            what += f" ({miss_reason(self._cassette, request)})"
        rule = "never records" if self.record_mode == "none" else "records only new cassettes"
        hint = self.rerecord_hint or (
            f"record_mode='all' (or delete {self.path} and use record_mode='once')"
        )
        return (
            f"cassette miss: {self.path} {what}; record mode {self.record_mode!r} {rule}. "
            f"Re-record it with: {hint}"
        )

    def __repr__(self) -> str:
        return f"CassetteTransport({str(self.path)!r}, record_mode={self.record_mode!r})"


def _stored(response: httpx.Response, content: bytes) -> dict[str, Any]:
    headers: dict[str, list[str]] = {}
    for name, value in response.headers.multi_items():
        headers.setdefault(name, []).append(value)
    return {
        "status": {"code": response.status_code, "message": response.reason_phrase},
        "headers": headers,
        "body": {"string": content},
    }


def _replayed(stored: dict[str, Any]) -> httpx.Response:
    body = stored["body"]["string"]
    body = b"" if body is None else body.encode() if isinstance(body, str) else body
    headers = [
        (name, str(v))
        for name, values in stored["headers"].items()
        for v in (values if isinstance(values, list) else [values])
    ]
    message = stored["status"].get("message")
    extensions = {"reason_phrase": message.encode("ascii", "replace")} if message else {}
    return httpx.Response(
        stored["status"]["code"],
        headers=headers,
        stream=httpx.ByteStream(body),
        extensions=extensions,
    )


def _decodable(response: httpx.Response, content: bytes) -> None:
    """Refuse, before it is recorded, a body the client refuses once decoded (its content
    encodings stacked, or decoding past the reply cap): recording decodes a body whole to scrub
    it, and a 600 KB gzip reply of 600 MB took the recorder to 2 GB (a 3.5 KB ``gzip, gzip`` one
    of 2 GB: ``MemoryError``), and recorded it (adversary round 14, part A)."""
    header = response.headers.get("content-encoding", "")
    if header and decodes_past(header, content, MAX_REPLY_BYTES, response.status_code):
        raise ProviderError(
            "invalid_response",
            f"the reply is over {MAX_REPLY_BYTES // 2**20:,} MiB once decoded (Content-Encoding "
            f"{header!r}); stopped reading it; nothing recorded",
            status=response.status_code,
        )


async def _whole(stream: httpx.AsyncByteStream, status: int) -> bytes:
    """A recorded reply's body, refused past :data:`~harness.providers._bodies.MAX_REPLY_BYTES`
    (as the client refuses it; a server sending without end grew this buffer until
    ``deadline_s``)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in stream:
        size += len(chunk)
        if size > MAX_REPLY_BYTES:
            raise ProviderError(
                "invalid_response",
                f"the reply is over {MAX_REPLY_BYTES // 2**20:,} MiB; stopped reading it (a "
                "server sending without end?); nothing recorded",
                status=status,
            )
        chunks.append(chunk)
    return b"".join(chunks)
