"""How a cassette is stored, matched and scrubbed (the vcrpy side of
:class:`~harness.cassettes._transport.CassetteTransport`): vcrpy's ``Cassette`` with an index of
match keys, a strict and atomic persister, and the scrubbing hooks.

Matching is on the method, the path, the query (sorted, secrets scrubbed) and the normalised
JSON body, through a key computed once per request and cached (stored requests: once at load),
and a dict from key to interaction indexes: replay is O(1) per request, not vcrpy's scan that
re-parses every stored body. Normalisation: the JSON is re-serialised with sorted keys and
compact separators, and the volatile fields in :data:`VOLATILE_FIELDS` are dropped
(``stream_options``: client-side stream settings; ``user``: OpenAI's end-user id;
``metadata.user_id``: Anthropic's). ``stream``, ``seed``, ``temperature`` and the messages are
kept: they change the answer. Host, port and scheme are ignored (a loopback server's port
changes between recording and replay); headers are ignored. A body that is not JSON is
matched on its exact bytes.

Scrubbed before anything is stored (and, since hooks run again on load, idempotently):
``Authorization``, ``Proxy-Authorization``, ``x-api-key``, ``api-key``, ``x-goog-api-key`` request
headers become ``REDACTED``; ``Cookie`` and ``Set-Cookie`` are dropped; query parameters
``api-key``, ``api_key``, ``apikey``, ``key`` and ``access_token`` become ``REDACTED``; every
occurrence of a caller-given secret (the profile's key value, see
:func:`~harness.cassettes._transport.profile_secrets`) in a header, the URI or a body becomes
``REDACTED`` (secrets shorter than 8 characters are replaced only where a whole header value
equals them). Compressed response bodies (gzip, deflate; br and zstd when httpx can decode them)
are decoded first and stored without ``content-encoding``. A streamed response body (SSE
``data:`` lines or NDJSON) is scrubbed whole and chunk by chunk: a secret split over two chunks
(the halves of a key in two ``delta.content`` strings) is cut out of both, ``REDACTED`` standing
where it started, and the chunks stay valid JSON
(:meth:`~harness.cassettes._secrets.Redactor.body`).
"""

from __future__ import annotations

import codecs
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx
from vcr.cassette import Cassette  # type: ignore[import-untyped]
from vcr.persisters.filesystem import CassetteNotFoundError  # type: ignore[import-untyped]
from vcr.request import Request as VcrRequest  # type: ignore[import-untyped]
from vcr.serialize import serialize  # type: ignore[import-untyped]
from vcr.serializers import compat  # type: ignore[import-untyped]

from harness._oneline import one_line
from harness._urls import canonical_path, without_password
from harness.cassettes._secrets import PLACEHOLDER, Redactor
from harness.cassettes._yaml import read_cassette
from harness.errors import CassetteCorrupt, CassetteError, CassetteMiss

try:  # the encodings this httpx can decode (br and zstd need optional packages)
    from httpx._decoders import SUPPORTED_DECODERS

    _ENCODINGS = frozenset(SUPPORTED_DECODERS)
except ImportError:  # pragma: no cover - httpx moved it
    _ENCODINGS = frozenset({"identity", "gzip", "deflate"})

__all__ = [
    "DROPPED_HEADERS",
    "PLACEHOLDER",
    "SECRET_HEADERS",
    "SECRET_QUERY",
    "VOLATILE_FIELDS",
    "VOLATILE_TEXT",
    "CassetteCorrupt",
    "CassetteError",
    "CassetteMiss",
    "IndexedCassette",
    "Persister",
    "Scrubber",
    "drifted_answer",
    "miss_reason",
    "normalise_body",
]

VOLATILE_FIELDS: tuple[str, ...] = ("stream_options", "user", "metadata.user_id")
#: Text that differs between two runs of the same command, masked in the matched form of a body
#: (only for matching: cassettes store what was sent). A tool result carries it back to the
#: model: pytest and unittest end with the time they took ("1 passed in 0.85s", "Ran 3 tests in
#: 0.002s"), so a code task's next request never matched its recording.
VOLATILE_TEXT: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?<= in )\d+(?:\.\d+)?s\b"), "<duration>"),
)
SECRET_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key"}
)
DROPPED_HEADERS = frozenset({"cookie", "set-cookie"})
SECRET_QUERY = frozenset({"api-key", "api_key", "apikey", "key", "access_token"})
_KEY_ATTR = "_harness_match_key"

Key = tuple[str, str, str, str]  # method, path, query, sha256 of the normalised body


# --- normalisation and matching --------------------------------------------------------------


def normalise_body(body: bytes | None, volatile: Sequence[str] = VOLATILE_FIELDS) -> bytes:
    """The bytes a body is matched on: canonical JSON without the volatile fields, or the
    body itself when it is not JSON."""
    if not body:
        return b""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return body
    if isinstance(data, dict):
        for dotted in volatile:
            *parents, last = dotted.split(".")
            node: Any = data
            for part in parents:
                node = node.get(part) if isinstance(node, dict) else None
            if isinstance(node, dict):
                node.pop(last, None)
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for pattern, replacement in VOLATILE_TEXT:
        text = pattern.sub(replacement, text)
    return text.encode("utf-8", "surrogatepass")  # a lone surrogate a reply spelt, echoed


def _body_bytes(request: Any) -> bytes:
    body = getattr(request, "body_bytes", request.body)
    if body is None:
        return b""
    return body.encode() if isinstance(body, str) else bytes(body)


def _same_key(r1: Any, r2: Any) -> None:
    """A vcrpy matcher (for vcrpy's own code paths): both requests carry a cached key."""
    if getattr(r1, _KEY_ATTR, None) != getattr(r2, _KEY_ATTR, None):
        raise AssertionError("method, path, query or normalised body differ")


class IndexedCassette(Cassette):  # type: ignore[misc]
    """vcrpy's Cassette with an index from match key to interaction indexes."""

    def __init__(self, *args: Any, volatile: Sequence[str], **kwargs: Any) -> None:
        super().__init__(*args, match_on=(_same_key,), **kwargs)
        self.volatile = tuple(volatile)
        self.index: dict[Key, list[int]] = {}
        self.normalisations = 0  # how often a body was parsed and normalised

    def key(self, request: Any) -> Key:
        key: Key | None = getattr(request, _KEY_ATTR, None)
        if key is None:
            self.normalisations += 1
            digest = hashlib.sha256(normalise_body(_body_bytes(request), self.volatile))
            query = json.dumps(request.query)
            key = (request.method.upper(), request.path or "/", query, digest.hexdigest())
            setattr(request, _KEY_ATTR, key)
        return key

    def append(self, request: Any, response: Any) -> None:
        before = len(self.data)
        super().append(request, response)
        if len(self.data) > before:
            self.index.setdefault(self.key(self.data[-1][0]), []).append(before)

    def _responses(self, request: Any) -> Iterator[tuple[int, Any]]:
        request = self._before_record_request(request)
        for index in self.index.get(self.key(request), ()):
            yield index, self.data[index][1]

    def _new_interactions(self) -> list[tuple[Any, Any]]:
        old = {self.key(r) for r, _ in self._old_interactions}
        return [(r, s) for r, s in self.data if self.key(r) not in old]

    def _rerecorded_interactions(self) -> list[tuple[Any, Any]]:
        loaded, recorded = self.data[: self._loaded_count], self.data[self._loaded_count :]
        if self.drop_unused_requests:
            return list(recorded)
        fresh = {self.key(r) for r, _ in recorded}
        return [(r, s) for r, s in loaded if self.key(r) not in fresh] + list(recorded)


# --- storage ---------------------------------------------------------------------------------


class Persister:
    """vcrpy's persister protocol: strict loading (a broken file is an error naming it, never
    "treated as empty") and atomic saving."""

    @staticmethod
    def load_cassette(path: str, serializer: Any) -> tuple[Any, ...]:
        file = Path(path)
        if not file.is_file():
            raise CassetteNotFoundError()
        try:  # bounded: a sparse 3 GB file was read whole (adversary round 22, part B)
            text = read_cassette(file)
        except (OSError, UnicodeDecodeError) as exc:
            raise CassetteCorrupt(f"cassette {path}: cannot be read: {exc}") from None
        if not text.strip():
            raise CassetteNotFoundError()  # vcrpy: an empty file is a cassette to record
        try:
            data = serializer.deserialize(text)
        except Exception as exc:
            reason = one_line(exc)
            raise CassetteCorrupt(f"cassette {path}: not valid YAML: {reason}") from None
        interactions = data.get("interactions") if isinstance(data, dict) else None
        if not isinstance(interactions, list):
            raise CassetteCorrupt(f"cassette {path}: no 'interactions' list at the top level")
        requests, responses = [], []
        for i, item in enumerate(interactions):
            problem = _shape_problem(item)
            if problem:
                raise CassetteCorrupt(f"cassette {path}: interactions[{i}]: {problem}")
            requests.append(VcrRequest._from_dict(item["request"]))
            responses.append(compat.convert_to_bytes(item["response"]))
        metadata = data.get("metadata")
        return (requests, responses, metadata) if metadata else (requests, responses)

    @staticmethod
    def save_cassette(path: str, cassette_dict: dict[str, Any], serializer: Any) -> None:
        text = serialize(cassette_dict, serializer)
        file = Path(path)
        file.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{file.name}.", suffix=".tmp", dir=file.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, file)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def _shape_problem(item: Any) -> str | None:
    if not isinstance(item, dict):
        return "not a mapping"
    request, response = item.get("request"), item.get("response")
    if not isinstance(request, dict) or set(request) != {"method", "uri", "body", "headers"}:
        return "request needs exactly method, uri, body, headers"
    if not isinstance(response, dict):
        return "response is not a mapping"
    status, body = response.get("status"), response.get("body")
    if not isinstance(status, dict) or not isinstance(status.get("code"), int):
        return "response.status.code is not an integer"
    if not isinstance(response.get("headers"), dict):
        return "response.headers is not a mapping"
    if not isinstance(body, dict) or "string" not in body:
        return "response.body.string is missing"
    return None


# --- scrubbing -------------------------------------------------------------------------------


class Scrubber:
    """The ``before_record_request`` / ``before_record_response`` hooks (idempotent). Values are
    replaced by the run's :class:`~harness.cassettes._secrets.Redactor`; a response body is
    scrubbed whole and, when streamed (SSE, NDJSON), chunk by chunk, so that a secret split
    over two chunks leaves neither half (:meth:`Redactor.body`). A header whose *name* holds a
    secret (HTTP names are case-insensitive: httpx lowers them) is dropped whole."""

    def __init__(self, secrets: Iterable[str]) -> None:
        values = {s.strip() for s in secrets if s and s.strip()}
        self.exact = frozenset(values)
        self.redactor = Redactor(values)
        self._folded = tuple(s.casefold() for s in self.redactor.secrets)

    def kept_name(self, name: str) -> bool:
        """Is a header of this name stored (no secret in it, in any case)?"""
        folded = name.casefold()
        return folded not in DROPPED_HEADERS and not any(s in folded for s in self._folded)

    def text(self, value: str) -> str:
        if value in self.exact:
            return PLACEHOLDER
        return self.redactor.text(value)

    def data(self, value: bytes) -> bytes:
        return self.redactor.data(value)

    def request(self, request: Any) -> Any:
        headers = {}
        for name, value in request.headers.items():
            low = name.lower()
            if self.kept_name(name):
                headers[name] = PLACEHOLDER if low in SECRET_HEADERS else self.text(str(value))
        uri = self.text(_scrub_query(without_password(request.uri, PLACEHOLDER)))
        spelt = canonical_path(uri)  # a token in the path, encoded only where it must be
        if spelt != uri and self.text(spelt) != spelt:
            uri = self.text(spelt)
        body = request.body
        if isinstance(body, bytes | str):  # a JSON body's strings decoded too (as responses):
            # a model's tool call echoed back can spell a key in escapes two JSON levels deep
            body = self.redactor.body(body.encode() if isinstance(body, str) else body)
        clean = VcrRequest(request.method, uri, body, headers)
        key = getattr(request, _KEY_ATTR, None)
        if key is not None and uri == request.uri and body == request.body:
            setattr(clean, _KEY_ATTR, key)
        return clean

    def response(self, response: dict[str, Any]) -> dict[str, Any]:
        headers = {
            str(k): list(v) if isinstance(v, list) else [v]
            for k, v in (response.get("headers") or {}).items()
        }
        body = response.get("body", {}).get("string")
        body = body.encode() if isinstance(body, str) else body
        names = {k.lower(): k for k in headers}
        stored = body
        if "content-encoding" in names and isinstance(body, bytes):
            decoded = _decode(headers[names["content-encoding"]], body)
            if decoded is None and self.redactor and body:
                # Compressed as httpx cannot read (``bzip2``, ``zstd`` without zstandard): the
                # client saw bytes, not JSON; a key inside was stored for any decompressor to
                # read, unseen by the scrubbing and by the lint (adversary round 20, part A).
                decoded = PLACEHOLDER.encode()
            if decoded is not None:
                body = decoded
                del headers[names["content-encoding"]]
        if isinstance(body, bytes):
            body = self.redactor.body(_utf8_body(headers, names, body))
            if body is not stored and "content-length" in names:
                headers[names["content-length"]] = [str(len(body))]
        clean = {
            k: [self.text(str(v)) for v in values]
            for k, values in headers.items()
            if self.kept_name(k)
        }
        scrubbed = {
            **response,
            "headers": clean,
            "body": {**response.get("body", {}), "string": body},
        }
        status = response.get("status")
        if isinstance(status, dict) and isinstance(status.get("message"), str):
            # The reason phrase a server sends (``HTTP/1.1 401 bad key sk-...``) was stored as
            # it came (adversary round 20, part A).
            scrubbed["status"] = {**status, "message": self.text(status["message"])}
        return scrubbed


_CHARSET = re.compile(r"charset\s*=\s*[\"']?([^;\s\"']+)[\"']?", re.IGNORECASE)
_TEXT_TYPES = ("json", "text/", "event-stream")


def _utf8_body(headers: dict[str, list[Any]], names: dict[str, str], body: bytes) -> bytes:
    """A text body in another encoding (its ``charset=``, or UTF-16/32 told by a byte-order mark
    or by JSON's own detection) as UTF-8, its content type saying so: the redactor searches
    UTF-8, and a key in a UTF-16 reply (which httpx and ``json.loads`` read as well) was stored
    as it came. Anything that does not decode is left as it is."""
    key = names.get("content-type")
    ctype = str(headers[key][0]) if key and headers[key] else ""
    if ctype and not any(t in ctype.lower() for t in _TEXT_TYPES):
        return body
    declared = _CHARSET.search(ctype)
    try:
        codec = codecs.lookup(declared.group(1) if declared else json.detect_encoding(body)).name
        if codec in ("utf-8", "utf-8-sig", "ascii"):
            return body
        text = body.decode(codec)
    except (LookupError, UnicodeDecodeError):
        return body
    if declared is not None and key is not None:
        headers[key] = [_CHARSET.sub("charset=utf-8", ctype, count=1)]
    return text.encode("utf-8", "surrogateescape")


def _scrub_query(uri: str) -> str:
    parts = urlsplit(uri)
    if not parts.query:
        return uri
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    if not any(k.lower() in SECRET_QUERY for k, _ in pairs):
        return uri
    query = urlencode([(k, PLACEHOLDER if k.lower() in SECRET_QUERY else v) for k, v in pairs])
    return urlunsplit(parts._replace(query=query))


def _decode(encodings: list[str], body: bytes) -> bytes | None:
    """The decoded body, or None when httpx cannot decode one of the encodings."""
    values = [v.strip().lower() for e in encodings for v in str(e).split(",") if v.strip()]
    if any(v not in _ENCODINGS for v in values):
        return None
    headers = [("content-encoding", v) for v in values]
    try:
        return httpx.Response(200, headers=headers, content=body).content
    except httpx.DecodingError:
        return None


# --- misses ----------------------------------------------------------------------------------


def miss_reason(cassette: IndexedCassette, request: Any) -> str:
    """Why nothing matched, against the closest recording (computed on a miss only)."""
    key = cassette.key(request)
    if key in cassette.index:
        n = len(cassette.index[key])
        return f"it was recorded {n} time(s) and every answer was played already"
    same = [i for i, (r, _) in enumerate(cassette.data) if cassette.key(r)[:3] == key[:3]]
    if not same:
        return f"none of the {len(cassette)} recorded requests has this method, path and query"
    fresh = [i for i in same if not cassette.play_counts[i]]
    if not fresh:
        return f"all {len(same)} recorded requests to this endpoint were played already"
    mine = _loads(normalise_body(_body_bytes(request), cassette.volatile))
    theirs = _loads(normalise_body(_body_bytes(cassette.data[fresh[0]][0]), cassette.volatile))
    return f"the next recorded request, #{fresh[0]}, differs at {_first_difference(theirs, mine)}"


def drifted_answer(cassette: IndexedCassette, request: Any) -> tuple[int, str] | None:
    """Drift: the first unplayed recording with this request's method, path and query, in
    recorded order, and where its body differs from the sent one (``None``: there is none)."""
    key = cassette.key(request)
    counts = cassette.play_counts
    for i, (recorded, _) in enumerate(cassette.data):
        if not counts[i] and cassette.key(recorded)[:3] == key[:3]:
            mine = _loads(normalise_body(_body_bytes(request), cassette.volatile))
            theirs = _loads(normalise_body(_body_bytes(recorded), cassette.volatile))
            return i, f"request #{i} differs at {_first_difference(theirs, mine)}"
    return None


def _loads(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return data


def _first_difference(recorded: Any, sent: Any, where: str = "$") -> str:
    if isinstance(recorded, dict) and isinstance(sent, dict):
        for key in sorted(set(recorded) | set(sent)):
            if key not in recorded or key not in sent:
                return f"{where}.{key} ({'only sent' if key in sent else 'only recorded'})"
            if recorded[key] != sent[key]:
                return _first_difference(recorded[key], sent[key], f"{where}.{key}")
    elif isinstance(recorded, list) and isinstance(sent, list):
        for i, (a, b) in enumerate(zip(recorded, sent, strict=False)):
            if a != b:
                return _first_difference(a, b, f"{where}[{i}]")
        return f"{where} (recorded {len(recorded)} items, sent {len(sent)})"
    return f"{where}: recorded {_short(recorded)}, sent {_short(sent)}"


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, bytes) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
