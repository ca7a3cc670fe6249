"""Which values are secrets, and the one :class:`Redactor` that removes them from every sink.

A secret is: every value of a header a provider profile declares (``headers``), the key named by
the profile's ``api_key_env``, and the value of every environment variable whose name ends in
``_KEY``, ``_TOKEN`` or ``_SECRET`` (values shorter than 8 characters are left alone: they
cannot be told from ordinary text). A ``Bearer xyz`` header value also yields ``xyz``.

A run builds one :class:`Redactor` from them (:func:`secret_values`) and every sink goes through
it, so a key a provider echoes (in an error message, a response's ``model`` field, a reply)
becomes ``REDACTED`` before it is written anywhere:

- the store: every column of a result row, nested JSON (``calls`` included) and the compressed
  transcript (:meth:`Redactor.value`), and the spans it ingests (:meth:`Redactor.text`);
- the trace file, line by line as it is written (a run killed with ``kill -9`` leaves no raw
  key), and the spans exported over OTLP (the telemetry layer takes the redactor as a plain
  ``str -> str`` function, :mod:`harness.telemetry._exporters`);
- the terminal: log records while a run is on (:meth:`Redactor.scrubbing_logs`) and what
  ``harness run`` prints;
- cassettes (:class:`harness.cassettes._store.Scrubber`): headers, URIs and bodies, and a streamed
  body (SSE ``data:`` lines, NDJSON) also chunk by chunk (:meth:`Redactor.body`): a secret split
  over two chunks (``"sk-ab"`` then ``"cd12..."``) is found in the concatenation of the chunks'
  strings at the same place (``choices[0].delta.content``, a tool call's ``arguments``, ...) and
  redacted in each chunk, so neither half is stored and the replayed chunks still parse; the
  text fields of one reply (reasoning, then answer) are also joined. The strings of a JSON body
  are scrubbed as they decode (``\\u0073\\u006b...`` is ``sk...``), and the body re-encoded.

Each secret is also searched as a JSON string spells it (``"`` and ``\\`` escaped, non-ASCII as
``\\uXXXX``, ``/`` as ``\\/`` or not), for text that is already encoded JSON (span lines,
bodies).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "MIN_SECRET_CHARS",
    "PLACEHOLDER",
    "Redactor",
    "scrub_file",
    "scrub_text",
    "secret_values",
]

MIN_SECRET_CHARS = 8
PLACEHOLDER = "REDACTED"
_BOM = b"\xef\xbb\xbf"
#: Strings longer than this are not decoded as JSON documents of their own.
_MAX_NESTED_JSON = 1 << 20
_SECRET_ENV = re.compile(r"(?:_KEY|_TOKEN|_SECRET)$", re.IGNORECASE)


def secret_values(
    providers: Iterable[str] = (), environ: Mapping[str, str] | None = None
) -> list[str]:
    """The secret values for runs of ``providers`` (provider specs), longest first."""
    from harness.errors import HarnessError
    from harness.providers._profiles import resolve_profile

    env = os.environ if environ is None else environ
    found: set[str] = set()
    for spec in providers:
        try:
            profile, _ = resolve_profile(spec)
        except HarnessError:
            continue
        for value in profile.headers.values():
            found.add(value)
            scheme, _, token = value.partition(" ")
            if token and scheme.lower() in ("bearer", "basic", "token"):
                found.add(token)
        if profile.api_key_env and env.get(profile.api_key_env):
            found.add(env[profile.api_key_env])
    found.update(v for k, v in env.items() if _SECRET_ENV.search(k))
    clean = {v.strip() for v in found if v and len(v.strip()) >= MIN_SECRET_CHARS}
    return sorted(clean, key=len, reverse=True)


class Redactor:
    """Replaces every secret value with ``REDACTED``: in text (:meth:`text`, also as a plain
    function: ``redactor(text)``), bytes (:meth:`data`), nested values (:meth:`value`), streamed
    chunks (:meth:`stream`, :meth:`body`), files (:meth:`file`) and log records
    (:meth:`scrubbing_logs`). Values shorter than :data:`MIN_SECRET_CHARS` are ignored. A
    Redactor without secrets is false and returns everything unchanged (the same objects)."""

    __slots__ = ("_bytes", "_needles", "_pattern", "secrets")

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        values = {s.strip() for s in secrets if s and len(s.strip()) >= MIN_SECRET_CHARS}
        #: The secret values, longest first.
        self.secrets: tuple[str, ...] = tuple(sorted(values, key=lambda s: (-len(s), s)))
        needles = set(self.secrets)
        for s in self.secrets:  # as the value of a JSON string spells it
            for spelt in (json.dumps(s)[1:-1], json.dumps(s, ensure_ascii=False)[1:-1]):
                needles.update((spelt, spelt.replace("/", "\\/")))  # PHP & co. escape "/"
        self._needles = tuple(sorted(needles, key=lambda s: (-len(s), s)))
        self._bytes = tuple(n.encode("utf-8", "surrogateescape") for n in self._needles)
        self._pattern = (
            re.compile("|".join(re.escape(s) for s in self.secrets)) if self.secrets else None
        )

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def __repr__(self) -> str:  # never the values themselves
        return f"Redactor({len(self.secrets)} secret(s))"

    def __call__(self, text: str) -> str:
        return self.text(text)

    def text(self, text: str) -> str:
        """``text`` with every secret replaced (the same object when there is none)."""
        for needle in self._needles:
            if needle in text:
                text = text.replace(needle, PLACEHOLDER)
        return text

    def data(self, data: bytes) -> bytes:
        """``data`` (UTF-8) with every secret replaced."""
        for needle in self._bytes:
            if needle in data:
                data = data.replace(needle, PLACEHOLDER.encode())
        return data

    def value(self, value: Any) -> Any:
        """A nested value with every secret replaced: strings, bytes, dict keys and values,
        lists, tuples, dataclasses (a changed copy), pydantic models (their JSON dump when a
        field changes) and, for other objects, their ``str()`` when it holds a secret. What
        holds no secret is returned as it is (the same object)."""
        if not self.secrets or value is None or isinstance(value, bool | int | float):
            return value
        if isinstance(value, str):
            return self._json_text(self.text(value))
        if isinstance(value, bytes):
            return self.data(value)
        if isinstance(value, dict):
            items = [(self.value(k), self.value(v)) for k, v in value.items()]
            changed = any(
                a is not k or b is not v
                for (a, b), (k, v) in zip(items, value.items(), strict=True)
            )
            return dict(items) if changed else value
        if isinstance(value, list | tuple):
            new = [self.value(v) for v in value]
            if all(a is b for a, b in zip(new, value, strict=True)):
                return value
            return new if isinstance(value, list) else tuple(new)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            changes = {}
            for f in dataclasses.fields(value):
                old = getattr(value, f.name, None)
                new = self.value(old)
                if new is not old:
                    changes[f.name] = new
            if not changes:
                return value
            clean = copy.copy(value)
            for name, new in changes.items():
                object.__setattr__(clean, name, new)  # frozen dataclasses too
            return clean
        dump = getattr(value, "model_dump", None)
        if callable(dump):  # a pydantic model
            data = dump(mode="json")
            clean = self.value(data)
            return value if clean is data else clean
        if isinstance(value, set | frozenset):
            items = [self.value(v) for v in value]
            if all(a is b for a, b in zip(items, value, strict=True)):
                return value
            return type(value)(items)
        text = str(value)
        clean_text = self.text(text)
        return value if clean_text is text else clean_text

    def _json_text(self, text: str) -> str:
        """``text``; when it is a JSON document itself (a tool call's ``arguments``) whose
        decoded strings hold a secret its raw text does not show (``\\uXXXX`` escapes), that
        document scrubbed and encoded again."""
        head = text[:1] if text[:1] not in " \t\r\n" else text.lstrip()[:1]
        if head not in ("{", "[") or len(text) > _MAX_NESTED_JSON or "\\" not in text:
            return text
        try:
            inner = json.loads(text)
        except ValueError:
            return text
        clean = self.value(inner)
        return text if clean is inner else json.dumps(clean, ensure_ascii=False)

    def stream(self, chunks: Sequence[Any]) -> list[Any]:
        """Parsed JSON chunks of one streamed reply with every secret replaced: within each
        chunk, and where a secret is split over chunks. The strings at the same place of every
        chunk (the same keys; a list item or object with an integer ``index`` field, such as
        OpenAI's choices and tool-call deltas or Anthropic's content blocks, by that index) are
        concatenated as the client does; each occurrence of a secret in the concatenation is
        cut out of every chunk it spans, and the chunk where it starts gets ``REDACTED``, so the
        concatenation of the new chunks is the redacted concatenation. Then the same again over
        the text fields of one reply joined in stream order (``reasoning_content``,
        ``reasoning``, ``thinking``, ``content``, ``text`` under the same parent, e.g. one
        choice's ``delta``): a key begun in the reasoning and ended in the answer is cut too.
        Changed chunks are copies; the others are returned as they are."""
        out = [self.value(c) for c in chunks]
        if not self.secrets or len(out) < 2:
            return out
        assert self._pattern is not None
        copied: set[int] = set()  # value() may share parts with the caller's chunk: copy first
        for group_of in (_same_place, _same_reply):
            groups: dict[tuple[Any, ...], list[tuple[int, tuple[Any, ...], str]]] = {}
            for i, chunk in enumerate(out):
                for where, place, text in _leaves(chunk, (), ()):
                    group = group_of(place)
                    if group is not None:
                        groups.setdefault(group, []).append((i, where, text))
            for leaves in groups.values():
                if len(leaves) > 1:
                    self._cut_leaves(out, leaves, copied)
        return out

    def _cut_leaves(
        self, out: list[Any], leaves: list[tuple[int, tuple[Any, ...], str]], copied: set[int]
    ) -> None:
        assert self._pattern is not None
        hits = [m.span() for m in self._pattern.finditer("".join(t for _, _, t in leaves))]
        start = 0
        for i, where, text in leaves if hits else ():
            end = start + len(text)
            new = _cut(text, start, end, hits)
            start = end
            if new == text:
                continue
            if i not in copied:
                out[i] = copy.deepcopy(out[i])
                copied.add(i)
            node = out[i]
            for step in where[:-1]:
                node = node[step]
            node[where[-1]] = new

    def body(self, body: bytes) -> bytes:
        """A response body with every secret replaced: in the raw bytes, then in the strings
        of a JSON body (a key spelt with ``\\uXXXX`` escapes decodes to the key), and in a
        streamed one (SSE ``data:`` lines of JSON, or NDJSON: one JSON value per line) in each
        chunk and across chunks (:meth:`stream`). A JSON document or line whose decoded strings
        changed is re-encoded as compact JSON (it still parses); everything else is kept byte
        for byte."""
        body = self.data(body)
        if not self.secrets:
            return body
        document = body.lstrip().removeprefix(_BOM)  # a byte-order mark: JSON all the same
        if document[:1] in (b"{", b"["):
            try:
                whole = json.loads(document)
            except ValueError:  # NDJSON, or not JSON at all
                pass
            else:
                clean_whole = self.value(whole)
                return body if clean_whole is whole else _dump(clean_whole)
        lines = body.splitlines(keepends=True)
        parsed: list[tuple[int, bytes, bytes, Any]] = []  # line, prefix, line ending, chunk
        for n, line in enumerate(lines):
            content = line.rstrip(b"\r\n")
            ending = line[len(content) :]
            payload = content[5:] if content.startswith(b"data:") else content
            payload = payload.lstrip(b" \t").removeprefix(_BOM)
            if not payload.startswith((b"{", b"[")):
                continue
            try:
                chunk = json.loads(payload)
            except ValueError:
                continue
            parsed.append((n, content[: len(content) - len(payload)], ending, chunk))
        clean = self.stream([chunk for *_, chunk in parsed])
        if all(new is chunk for (*_, chunk), new in zip(parsed, clean, strict=True)):
            return body
        for (n, prefix, ending, chunk), new in zip(parsed, clean, strict=True):
            if new is not chunk:
                lines[n] = prefix + _dump(new) + ending
        return b"".join(lines)

    def file(self, path: Path) -> int:
        """Replace every secret in a text file, in place (line by line: a span file may be
        larger than memory); returns how many values were replaced."""
        if not self.secrets or not path.is_file():
            return 0
        count = 0
        with path.open(encoding="utf-8", errors="surrogateescape") as f:
            for line in f:
                count += sum(line.count(s) for s in self._needles)
        if count:
            tmp = path.with_suffix(path.suffix + ".scrub")
            try:
                with (
                    path.open(encoding="utf-8", errors="surrogateescape") as src,
                    tmp.open("w", encoding="utf-8", errors="surrogateescape") as dst,
                ):
                    for line in src:
                        dst.write(self.text(line))
                os.replace(tmp, path)
            except BaseException:  # a full disk, say: no half-written copy left beside it
                with contextlib.suppress(OSError):
                    tmp.unlink()
                raise
        return count

    @contextlib.contextmanager
    def scrubbing_logs(self) -> Iterator[None]:
        """While in the block, every log record of the process is scrubbed as it is made (its
        message, and its traceback, which then travels as text): whatever handler shows or
        stores it, the terminal included. Blocks may nest and overlap across threads."""
        if not self.secrets:
            yield
            return
        from harness.cassettes._logscrub import LOGS

        LOGS.add(self)
        try:
            yield
        finally:
            LOGS.remove(self)


#: The text fields of one reply a client shows one after the other (reasoning, then answer).
_TEXT_FIELDS = frozenset({"reasoning_content", "reasoning", "thinking", "content", "text"})


def _same_place(place: tuple[Any, ...]) -> tuple[Any, ...]:
    return place


def _same_reply(place: tuple[Any, ...]) -> tuple[Any, ...] | None:
    return place[:-1] if place and place[-1] in _TEXT_FIELDS else None


def _dump(value: Any) -> bytes:
    """``value`` as compact JSON (UTF-8; a lone surrogate kept as a ``\\u`` escape)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, separators=(",", ":")).encode("ascii")


def _leaves(
    node: Any, place: tuple[Any, ...], where: tuple[Any, ...]
) -> Iterator[tuple[tuple[Any, ...], tuple[Any, ...], str]]:
    """``(where, place, text)`` for each string in a parsed JSON chunk: ``where`` is its path in
    this chunk, ``place`` the path that identifies the same stream across chunks."""
    if isinstance(node, str):
        if where:
            yield where, place, node
    elif isinstance(node, dict):
        index = node.get("index")
        if isinstance(index, int) and not isinstance(index, bool):
            place = (*place, f"#{index}")
        for key, value in node.items():
            yield from _leaves(value, (*place, key), (*where, key))
    elif isinstance(node, list):
        for n, item in enumerate(node):
            index = item.get("index") if isinstance(item, dict) else None
            indexed = isinstance(index, int) and not isinstance(index, bool)
            yield from _leaves(item, place if indexed else (*place, n), (*where, n))


def _cut(text: str, start: int, end: int, hits: Sequence[tuple[int, int]]) -> str:
    """The part ``text`` (``[start, end)`` of a concatenation) with each hit cut out, and
    ``REDACTED`` where a hit starts."""
    parts: list[str] = []
    pos = start
    for lo, hi in hits:
        if hi <= start or lo >= end:
            continue
        cut_lo, cut_hi = max(lo, start), min(hi, end)
        parts.append(text[pos - start : cut_lo - start])
        if lo >= start:
            parts.append(PLACEHOLDER)
        pos = cut_hi
    if not parts:
        return text
    parts.append(text[pos - start :])
    return "".join(parts)


def scrub_text(text: str, secrets: Iterable[str]) -> str:
    """``text`` with each of ``secrets`` replaced (see :class:`Redactor` to scrub many)."""
    return Redactor(secrets).text(text)


def scrub_file(path: Path, secrets: Iterable[str]) -> int:
    """Replace every secret in a text file, in place; returns how many values were replaced."""
    return Redactor(secrets).file(path)
