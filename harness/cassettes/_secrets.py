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
``\\uXXXX``, ``/`` as ``\\/`` or not: span lines, bodies) and as an address does (``%2F``)."""

from __future__ import annotations

import contextlib
import copy
import json
import os
import re
import stat
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.cassettes._cutheads import CutHeads
from harness.cassettes._jsonliterals import scrub_literals
from harness.cassettes._logscrub import LOGS
from harness.cassettes._replies import OneReply
from harness.cassettes._scrubparts import (
    Needles,
    Place,
    Walk,
    cut,
    dump_compact,
    find_spans,
    leaves,
    meets_placeholder,
    merge_spans,
    parses_json_line,
    percent_spellings,
    replace_spans,
    until_still,
    withhold_texts,
)

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
#: Strings longer than this are not parsed as JSON documents of their own: their string literals
#: are scrubbed one by one instead (a key in escapes in 1.1 MB of arguments was kept before).
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

    __slots__ = ("_again", "_bytes", "_cut", "_needles", "_secrets", "_walk", "secrets")

    def __init__(self, secrets: Iterable[str] = (), *, cut_heads: bool = False) -> None:
        values = {s.strip() for s in secrets if s and len(s.strip()) >= MIN_SECRET_CHARS}
        #: The secret values, longest first.
        self.secrets: tuple[str, ...] = tuple(sorted(values, key=lambda s: (-len(s), s)))
        needles = set(self.secrets)
        for s in self.secrets:  # as the value of a JSON string spells it
            for spelt in (json.dumps(s)[1:-1], json.dumps(s, ensure_ascii=False)[1:-1]):
                needles.update((spelt, spelt.replace("/", "\\/")))  # PHP & co. escape "/"
            needles.update(percent_spellings(s))
        ordered = sorted(needles, key=lambda s: (-len(s), s))
        self._needles = Needles(ordered)
        self._bytes = Needles([n.encode("utf-8", "surrogateescape") for n in ordered])
        self._secrets = Needles(self.secrets)
        self._walk = Walk(self._decoded, self.data)
        #: A secret that a replacement can make (``meets_placeholder``): scrub until still.
        self._again = any(meets_placeholder(s, PLACEHOLDER) for s in self.secrets)
        #: What a cut left of a secret (texts cut before they are scrubbed: traces, rows).
        self._cut = CutHeads(self.secrets if cut_heads else ())

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def __repr__(self) -> str:  # never the values themselves
        return f"Redactor({len(self.secrets)} secret(s))"

    def __call__(self, text: str) -> str:
        return self.text(text)

    def text(self, text: str) -> str:
        """``text`` with every secret replaced (the same object when there is none). Where
        secrets overlap (one's end is another's start) the whole stretch they cover becomes one
        ``REDACTED``: no part of either is left. With ``cut_heads``, nor is the head a cut left
        of one (:class:`~harness.cassettes._cutheads.CutHeads`; never for a stream's chunks)."""
        spans = find_spans(text, self._needles)
        if self._cut and (cut := self._cut.spans(text)):
            spans = merge_spans([*spans, *cut])
        clean = replace_spans(text, spans, PLACEHOLDER) if spans else text
        if spans and self._again:
            clean = until_still(
                clean,
                lambda t: replace_spans(t, find_spans(t, self._needles), PLACEHOLDER),
                PLACEHOLDER,
            )
        if "\\u" in clean and '"' in clean:  # JSON inside text (a provider's error body)
            scrubbed = scrub_literals(clean, self._decoded)
            if scrubbed != clean:  # a key spelt in escapes in one of its strings
                return scrubbed
        return clean

    def data(self, data: bytes) -> bytes:
        """``data`` (UTF-8) with every secret replaced (overlapping ones as in :meth:`text`)."""
        spans = find_spans(data, self._bytes)
        if not spans:
            return data
        clean = replace_spans(data, spans, PLACEHOLDER.encode())
        if self._again:
            mark = PLACEHOLDER.encode()
            clean = until_still(
                clean, lambda d: replace_spans(d, find_spans(d, self._bytes), mark), mark
            )
        return clean

    def value(self, value: Any) -> Any:
        """A nested value with every secret replaced: strings, bytes, dict keys and values,
        lists, tuples, dataclasses (a changed copy), pydantic models (their JSON dump when a
        field changes) and, for other objects, their ``str()`` when it holds a secret. What
        holds no secret is returned as it is (the same object)."""
        if not self.secrets:
            return value
        return self._walk(value)  # an explicit stack: any depth (no RecursionError)

    def _json_text(self, text: str) -> str:
        """``text``; when it is a JSON document itself (a tool call's ``arguments``) whose
        decoded strings hold a secret its raw text does not show (``\\uXXXX`` escapes), that
        document scrubbed and encoded again."""
        head = text[:1] if text[:1] not in " \t\r\n" else text.lstrip()[:1]
        if head not in ("{", "[") or "\\" not in text:
            return text
        if len(text) > _MAX_NESTED_JSON:  # not parsed whole: its strings one by one (linear)
            return scrub_literals(text, self._decoded)
        try:
            inner = json.loads(text)
        except ValueError:
            return text
        except RecursionError:  # deeper than the parser goes: scrub its strings one by one
            return scrub_literals(text, self._decoded)
        clean = self.value(inner)
        if clean is inner:
            return text
        try:
            return json.dumps(clean, ensure_ascii=False)
        except RecursionError:
            return scrub_literals(text, self._decoded)

    def _decoded(self, value: str) -> str:
        """A decoded JSON string scrubbed (and the JSON document it may hold)."""
        return self._json_text(self.text(value))

    def stream(self, chunks: Sequence[Any]) -> list[Any]:
        """Parsed JSON chunks of one streamed reply with every secret replaced: within each
        chunk, and where a secret is split over chunks. The strings at the same place of every
        chunk (the same keys; a list item or object with an integer ``index`` field, such as
        OpenAI's choices and tool-call deltas or Anthropic's content blocks, by that index) are
        concatenated as the client does; each occurrence of a secret in the concatenation is
        cut out of every chunk it spans, and the chunk where it starts gets ``REDACTED``, so the
        concatenation of the new chunks is the redacted concatenation. Then the same over the
        text fields of one reply joined in stream order (:data:`_TEXT_FIELDS` under one parent,
        an Anthropic message's blocks as one: :class:`OneReply`): a key begun in the reasoning
        and ended in the answer is cut too. Changed chunks are copies."""
        scrubbed = [self.value(c) for c in chunks]
        if not self.secrets or len(scrubbed) < 2:
            return scrubbed
        work = copy.deepcopy(scrubbed)  # _join changes chunks in place
        changed = more = self._join(work)
        for _ in range(16 if self._again and changed else 0):  # a cut that made a secret
            more = self._join(work)
            changed |= more
            if not more:
                break
        if more and self._again:  # still making secrets after the passes: no text is kept
            changed |= withhold_texts(work, _TEXT_FIELDS | {"arguments"}, PLACEHOLDER)
        return [work[i] if i in changed else c for i, c in enumerate(scrubbed)]

    def _join(self, chunks: list[Any]) -> set[int]:
        """The cuts of :meth:`stream` across chunks (each scrubbed on its own already), made in
        place; returns the indices of the chunks changed. Each group's concatenation is searched
        once and its spans walked once: linear in the reply's size."""
        changed: set[int] = set()
        if not self.secrets or not chunks:  # one chunk: its reply's text fields, joined
            return changed
        # One walk: (chunk, parent, key) of each string, by place and by reply.
        places: dict[Place, list[tuple[int, Any, Any]]] = {}
        replies: dict[Place, list[tuple[int, Any, Any]]] = {}
        blocks = OneReply()
        for i, chunk in enumerate(chunks):
            for place, parent, key in leaves(chunk):
                found = (i, parent, key)
                places.setdefault(place, []).append(found)
                if place and place[1] in _TEXT_FIELDS:
                    replies.setdefault(blocks(place[0]), []).append(found)
        for groups in (places, replies):  # the second sees the cuts of the first
            for parts in groups.values():
                if len(parts) > 1:
                    self._cut_parts(parts, changed)
        return changed

    def _cut_parts(self, parts: list[tuple[int, Any, Any]], changed: set[int]) -> None:
        texts = [parent[key] for _, parent, key in parts]
        spans = find_spans("".join(texts), self._secrets)
        start = first = 0
        for (i, parent, key), text in zip(parts, texts, strict=True) if spans else ():
            new, first = cut(text, start, spans, first, PLACEHOLDER)
            start += len(text)
            if new != text:
                parent[key] = new
                changed.add(i)
        # The parts may make a JSON document (a tool call's ``arguments``) that spells a secret
        # in ``\u`` escapes split over chunks: the whole document, scrubbed as it decodes, goes
        # in the first part and the others are emptied (the concatenation is the same text).
        whole = "".join(parent[key] for _, parent, key in parts)
        clean = self._json_text(whole) if "\\" in whole else whole
        if clean != whole:
            for n, (i, parent, key) in enumerate(parts):
                parent[key] = clean if n == 0 else ""
                changed.add(i)

    def body(self, body: bytes) -> bytes:
        """A response body with every secret replaced: in the raw bytes, then in the strings
        of a JSON body (a key spelt with ``\\uXXXX`` escapes decodes to the key), and in a
        streamed one (SSE ``data:`` lines of JSON, or NDJSON: one JSON value per line) in each
        chunk and across chunks (:meth:`stream`). A JSON document or line whose decoded strings
        changed is re-encoded as compact JSON (it still parses); everything else is kept byte
        for byte."""
        raw, body = body, self.data(body)
        if not self.secrets:
            return body
        if body is not raw:  # a secret spanning JSON punctuation (``"content":``) broke it
            body = self._json_kept(raw, body)
        document = body.lstrip().removeprefix(_BOM)  # a byte-order mark: JSON all the same
        if document[:1] in (b"{", b"["):
            try:
                whole = json.loads(document)
            except ValueError:  # NDJSON, or not JSON at all
                pass
            except RecursionError:  # deeper than the parser goes: its strings one by one
                return self._literals(body)
            else:
                clean_whole = self.value(whole)
                # A key split between one reply's reasoning and its answer (the document is
                # this method's own: cut in place). Streams only before (round 22, part A).
                joined = self._join([clean_whole])
                if clean_whole is whole and not joined:
                    return body
                try:
                    return dump_compact(clean_whole)
                except RecursionError:
                    return self._literals(body)
        lines = body.splitlines(keepends=True)
        parsed: list[tuple[int, bytes, bytes, Any]] = []  # line, prefix, line ending, chunk
        scrubbed: list[Any] = []
        deep = False
        for n, line in enumerate(lines):
            content = line.rstrip(b"\r\n")
            ending = line[len(content) :]
            payload = content[5:] if content.startswith(b"data:") else content
            payload = payload.lstrip(b" \t").removeprefix(_BOM)
            if not payload.startswith((b"{", b"[")):  # text: any JSON strings in it
                lines[n] = self._literals(line) if b"\\u" in line else line
                deep = deep or lines[n] is not line
                continue
            try:
                chunk = json.loads(payload)
            except ValueError:  # not JSON after all: its string literals one by one
                lines[n] = self._literals(line) if b"\\u" in line else line
                deep = deep or lines[n] is not line
                continue
            except RecursionError:  # too deep to parse: its strings one by one
                lines[n], deep = self._literals(line), True
                continue
            parsed.append((n, content[: len(content) - len(payload)], ending, chunk))
            # Without a backslash the decoded strings are the raw text, scrubbed already.
            scrubbed.append(self.value(chunk) if b"\\" in payload else chunk)
        # The chunks are this method's own (just parsed): cut in place.
        joined = self._join(scrubbed)
        if (
            not deep
            and not joined
            and all(a is b for (*_, a), b in zip(parsed, scrubbed, strict=True))
        ):
            return body
        for k, ((n, prefix, ending, chunk), new) in enumerate(zip(parsed, scrubbed, strict=True)):
            if new is not chunk or k in joined:
                try:
                    lines[n] = prefix + dump_compact(new) + ending
                except RecursionError:
                    lines[n] = self._literals(lines[n])
        return b"".join(lines)

    def _json_kept(self, raw: bytes, scrubbed: bytes) -> bytes:
        """``scrubbed`` (``raw`` with its secrets replaced byte for byte), except that a JSON
        document or ``data:`` line the replacement made unparsable (a secret holding quotes and
        a colon, as ``"content":``: the recording could not be replayed) is scrubbed in its
        strings only and encoded again."""
        lines = [raw] if raw.lstrip().removeprefix(_BOM)[:1] in (b"{", b"[") else None
        new = [scrubbed] if lines else scrubbed.splitlines(keepends=True)
        lines = lines or raw.splitlines(keepends=True)
        if len(lines) != len(new):  # a secret holding a line break: kept as replaced
            return scrubbed
        for n, (before, after) in enumerate(zip(lines, new, strict=True)):
            if before == after:
                continue
            content = before.rstrip(b"\r\n")
            payload = content[5:] if content.startswith(b"data:") else content
            payload = payload.lstrip(b" \t").removeprefix(_BOM)
            if not payload.startswith((b"{", b"[")) or parses_json_line(after):
                continue
            try:
                value = json.loads(payload)
                new[n] = (content[: len(content) - len(payload)] + dump_compact(self.value(value))
                          + before[len(content) :])  # fmt: skip
            except (ValueError, RecursionError):
                continue
        return b"".join(new)

    def _literals(self, data: bytes) -> bytes:
        """JSON text too deep to parse, with its string literals scrubbed one by one."""
        text = data.decode("utf-8", "surrogateescape")
        clean = scrub_literals(text, self._decoded)
        return data if clean == text else clean.encode("utf-8", "surrogateescape")

    def file(self, path: Path) -> int:
        """Replace every secret in a text file, in place (line by line: a span file may be
        larger than memory); returns how many values were replaced."""
        if not self.secrets or not path.is_file():
            return 0
        count = 0
        with path.open(encoding="utf-8", errors="surrogateescape") as f:
            for line in f:
                count += len(find_spans(line, self._needles))
        if count:
            # A fresh name (O_EXCL): a link planted at a fixed one (``spans.jsonl.scrub``) had
            # its target overwritten with the spans and then renamed over the span file.
            fd, name = tempfile.mkstemp(
                dir=path.parent, prefix=f".{path.name[:80]}.", suffix=".scrub"
            )
            tmp = Path(name)
            try:
                os.fchmod(fd, stat.S_IMODE(os.stat(path).st_mode))  # the span file's own
                with (
                    path.open(encoding="utf-8", errors="surrogateescape") as src,
                    os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as dst,
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
        LOGS.add(self)
        try:
            yield
        finally:
            LOGS.remove(self)


#: The text fields of one reply a client shows one after the other (reasoning, then answer).
_TEXT_FIELDS = frozenset({"reasoning_content", "reasoning", "thinking", "content", "text"})


def scrub_text(text: str, secrets: Iterable[str]) -> str:
    """``text`` with each of ``secrets`` replaced (see :class:`Redactor` to scrub many)."""
    return Redactor(secrets).text(text)


def scrub_file(path: Path, secrets: Iterable[str]) -> int:
    """Replace every secret in a text file, in place; returns how many values were replaced."""
    return Redactor(secrets).file(path)
