"""``harness cassettes lint``: find secret-looking values in cassette files before they are
committed.

Rules (each finding names the file and the location inside it):

- ``secret-header``: an ``Authorization``, ``Proxy-Authorization``, ``x-api-key``, ``api-key`` or
  ``x-goog-api-key`` header (request or response) whose value is not a placeholder
  (``REDACTED``, ``FILTERED``, ``<ANYTHING>``, ``***``, ``xxx``, empty; after an optional
  ``Bearer``/``Basic``/``Token`` scheme);
- ``cookie``: a ``Cookie`` or ``Set-Cookie`` header with a value;
- ``url-password``: a password in a request's ``uri`` (``http://user:PASS@host``), or the
  user alone (a token given as the user), that is not a placeholder;
- ``secret-query``: an ``api-key``, ``api_key``, ``apikey``, ``key`` or ``access_token`` query
  parameter with a non-placeholder value;
- ``api-key``: a string that looks like a provider key anywhere (URI, headers, bodies):
  ``sk-ant-...``, ``sk-...`` (20+ characters), AWS ``AKIA``/``ASIA``, GitHub ``ghp_``...,
  Google ``AIza...``, Hugging Face ``hf_...``, Slack ``xox?-``;
- ``bearer-token``: ``Bearer <token>`` anywhere with a token of 20+ characters and high
  entropy (at least 3 bits per character);
- each rule also looks at the strings a JSON body decodes to (the whole body, or each line of
  a stream): a key spelt with ``\\uXXXX`` escapes is found as the client would read it;
- ``api-key`` and ``bearer-token`` also look at the file's own text, for what no loaded value
  holds: a comment, a mapping key, text after the document's end, a value a repeated key
  replaced (the file is committed whole);
- ``corrupt``: the file is not a readable vcrpy cassette (the CLI then exits 2).

Values are printed masked (their first 4 characters and length), never in full.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from harness._files import MAX_INPUT_BYTES, bounded_lines, file_kind, open_input
from harness._oneline import one_line
from harness.cassettes import _yaml as yamlserializer
from harness.cassettes._transport import DROPPED_HEADERS, SECRET_HEADERS, SECRET_QUERY
from harness.errors import ConfigError
from harness.telemetry._escape import escape_controls

__all__ = ["Finding", "cassette_files", "lint_cassettes", "lint_main"]

_PLACEHOLDER = re.compile(
    r"^(|<[^<>]*>|\{\{[^{}]*\}\}|\*+|x+|\[?(redacted|filtered|scrubbed|removed|hidden|dummy|"
    r"placeholder)\]?)$",
    re.IGNORECASE,
)
_SCHEME = re.compile(r"^(bearer|basic|token)\s+", re.IGNORECASE)
_KEYS = re.compile(
    r"(?<![A-Za-z0-9_-])("
    r"sk-ant-[A-Za-z0-9_-]{16,}|sk-[A-Za-z0-9_-]{20,}|(?:AKIA|ASIA)[0-9A-Z]{16}|"
    r"gh[pousr]_[A-Za-z0-9]{30,}|AIza[0-9A-Za-z_-]{35}|hf_[A-Za-z0-9]{30,}|"
    r"xox[abprs]-[A-Za-z0-9-]{10,})"
)
#: A JSON string literal (its text between the quotes).
_LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_BEARER = re.compile(r"\bBearer\s+([A-Za-z0-9._~+/=-]{20,})")


@dataclass(frozen=True, slots=True)
class Finding:
    path: Path
    location: str
    rule: str
    detail: str

    def __str__(self) -> str:
        """One line: a line break in a file's name is shown escaped (it printed a line of its
        own, ``OK: 3024 cassette(s) clean``; adversary round 18, part B)."""
        where = f"{self.path}: {self.location}" if self.location else str(self.path)
        return escape_controls(f"{where}: {self.rule}: {self.detail}")


def cassette_files(directory: str | os.PathLike[str]) -> list[Path]:
    """The ``.yaml``/``.yml`` files under ``directory`` (or the file itself), sorted."""
    root = Path(directory)
    if root.is_file():
        return [root]
    if not root.is_dir():
        try:
            what = file_kind(os.stat(root).st_mode)
        except OSError as exc:
            raise ConfigError(f"{root} is not a directory or a file ({exc.strerror})") from None
        raise ConfigError(f"{root} is {what}, not a folder of cassettes or a cassette file")
    return sorted(p for p in root.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())


def lint_cassettes(directory: str | os.PathLike[str]) -> list[Finding]:
    """Every finding in every cassette under ``directory``."""
    findings: list[Finding] = []
    for path in cassette_files(directory):
        findings.extend(lint_file(path))
    return findings


def lint_file(path: Path) -> list[Finding]:
    try:
        raw = yamlserializer.read_cassette(path)  # a FIFO, or past its bound: refused
        data = yamlserializer.deserialize(raw, source=str(path))
    except Exception as exc:
        return [Finding(path, "", "corrupt", f"not a readable cassette: {one_line(exc)}")]
    interactions = data.get("interactions") if isinstance(data, dict) else None
    if not isinstance(interactions, list):
        return [Finding(path, "", "corrupt", "no 'interactions' list at the top level")]
    found: list[Finding] = []
    for i, item in enumerate(interactions):
        for part in ("request", "response"):
            section = item.get(part) if isinstance(item, dict) else None
            headers = section.get("headers") if isinstance(section, dict) else None
            if isinstance(headers, dict):
                where = f"interactions[{i}].{part}.headers"
                found += _headers(path, where, headers)
        request = item.get("request") if isinstance(item, dict) else None
        uri = request.get("uri") if isinstance(request, dict) else None
        if isinstance(uri, str):
            found += _userinfo(path, f"interactions[{i}].request.uri", uri)
            for name, value in parse_qsl(_split(uri)[1], keep_blank_values=True):
                if name.lower() in SECRET_QUERY and not _is_placeholder(value):
                    where = f"interactions[{i}].request.uri?{name}"
                    found.append(Finding(path, where, "secret-query", _mask(value)))
    flagged = {f.location for f in found}  # a header already reported is not reported again
    for where, text in _strings(data, ""):
        if where.rsplit("[", 1)[0] in flagged:
            continue
        found += _looks(path, where, text)
        for inner, decoded in _json_strings(text):  # "\u0073\u006b..." decodes to "sk..."
            found += _looks(path, f"{where} {inner}", decoded, seen=text)
    return found + _outside_values(path, raw, data)


def _outside_values(path: Path, raw: str, data: Any) -> list[Finding]:
    """Keys and tokens in the file's text that no value of the loaded cassette holds: in a
    comment, a mapping key, after the document's end, or under a key given twice (YAML keeps
    the last). The file is committed whole, so they leak as much as a value does; the lint
    walked the loaded values only and said "clean"."""
    seen = "\n".join(text for _, text in _strings(data, ""))
    found: list[Finding] = []
    for n, line in enumerate(raw.splitlines(), 1):
        if _KEYS.search(line) or "Bearer" in line:
            found += _looks(path, f"line {n}, outside the cassette's values", line, seen=seen)
    return found


def _looks(path: Path, where: str, text: str, seen: str = "") -> Iterator[Finding]:
    """Keys and bearer tokens in ``text``, but not those ``seen`` already shows as they are."""
    for match in _KEYS.finditer(text):
        if match.group(1) not in seen:
            yield Finding(path, _at(where, match), "api-key", _mask(match.group(1)))
    for match in _BEARER.finditer(text):
        token = match.group(1)
        if token in seen or _is_placeholder(token) or _KEYS.match(token):
            continue
        if _entropy(token) >= 3.0:
            yield Finding(path, _at(where, match), "bearer-token", _mask(token))


def _json_strings(text: str) -> Iterator[tuple[str, str]]:
    """``(where, string)`` for each string a JSON body decodes to (a whole JSON document, or
    each JSON line of a stream: SSE ``data:`` lines, NDJSON), where it differs from its raw
    spelling (escapes): what a client reading the body would see."""
    docs: list[tuple[str, str]] = []
    if text.lstrip()[:1] in ("{", "["):
        docs.append(("(JSON)", text))
    if "\n" in text.strip():
        for n, line in enumerate(text.splitlines(), 1):
            payload = line[5:] if line.startswith("data:") else line
            if payload.lstrip()[:1] in ("{", "["):
                docs.append((f"(JSON line {n})", payload))
    for label, doc in docs:
        try:
            value = json.loads(doc)
        except (ValueError, RecursionError):
            continue
        # Strings spelt without an escape are in the text as they are: left out. (Each was
        # looked for in the whole body: quadratic, 17 s for a stream of 16,000 chunks of
        # 3 MB, minutes past it; adversary round 20, part B.)
        plain = {m[1] for m in _LITERAL.finditer(doc) if "\\" not in m[1]}
        stack: list[tuple[str, Any]] = [(label, value)]
        while stack:
            where, node = stack.pop()
            if isinstance(node, dict):
                stack += [(f"{where}.{k}", v) for k, v in node.items()]
                stack += [(f"{where}.<key>", k) for k in node if k not in plain]
            elif isinstance(node, list):
                stack += [(f"{where}[{i}]", v) for i, v in enumerate(node)]
            elif isinstance(node, str) and node not in plain:
                yield where, node


def _headers(path: Path, where: str, headers: dict[Any, Any]) -> Iterator[Finding]:
    for name, values in headers.items():
        low = str(name).lower()
        for value in values if isinstance(values, list) else [values]:
            text = _text(value)
            if low in SECRET_HEADERS and not _is_placeholder(_SCHEME.sub("", text.strip())):
                yield Finding(path, f"{where}.{name}", "secret-header", _mask(text))
            elif low in DROPPED_HEADERS and text.strip():
                yield Finding(path, f"{where}.{name}", "cookie", _mask(text))


def _strings(obj: Any, where: str) -> Iterator[tuple[str, str]]:
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield from _strings(value, f"{where}.{key}" if where else str(key))
    elif isinstance(obj, list | tuple):
        for i, value in enumerate(obj):
            yield from _strings(value, f"{where}[{i}]")
    elif isinstance(obj, str | bytes):
        yield where, _text(obj)


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _userinfo(path: Path, where: str, uri: str) -> list[Finding]:
    """A password in ``uri`` (``http://u:PASS@host``), or a token given as its user: recorded
    whole before adversary round 18, part B (the harness now writes ``u:REDACTED@``); one
    given as ``TOKEN:`` (round 19, part B)."""
    netloc = _split(uri)[0]
    user, at, _ = netloc.rpartition("@")
    if not at:
        return []
    name, _, password = user.partition(":")
    secret = password or name  # ``TOKEN:@host``: a token as the user, an empty password
    if not secret or _is_placeholder(secret):
        return []
    return [Finding(path, f"{where} (user information)", "url-password", _mask(secret))]


def _split(uri: str) -> tuple[str, str]:
    """``uri``'s host part and query; read by hand where ``urlsplit`` refuses it (``Invalid
    IPv6 URL``: a hostile cassette's ``http://[::1/x`` was a traceback, exit 1; adversary
    round 19, part B)."""
    try:
        parts = urlsplit(uri)
    except ValueError:
        netloc = re.split(r"[/?#]", uri.partition("//")[2], maxsplit=1)[0]
        return netloc, uri.partition("?")[2].partition("#")[0]
    return parts.netloc, parts.query


def _is_placeholder(value: str) -> bool:
    return bool(_PLACEHOLDER.match(_SCHEME.sub("", value.strip())))


def _entropy(token: str) -> float:
    counts = Counter(token)
    return -sum(n / len(token) * math.log2(n / len(token)) for n in counts.values())


def _at(where: str, match: re.Match[str]) -> str:
    return f"{where} (char {match.start(1)})"


def _mask(value: str) -> str:
    value = value.strip()
    return f"{value[:4]!r}... ({len(value)} chars) is not a placeholder"


def lint_trace_file(path: Path) -> list[Finding]:
    """Secret-looking values in a JSON-lines span file (what ``--trace-file`` writes): API
    keys, bearer tokens, and any value of a ``*_KEY`` / ``*_TOKEN`` / ``*_SECRET`` variable set
    in this environment."""
    from harness.cassettes._secrets import secret_values

    literal = secret_values()
    found: list[Finding] = []
    try:  # line by line: a span file may be larger than memory (read whole, 3 GB was a
        with open_input(path) as f:  # MemoryError traceback: adversary round 21, part B)
            for n, raw in enumerate(bounded_lines(f), 1):
                if raw is None:
                    why = f"line {n} is longer than {MAX_INPUT_BYTES:,} bytes: not checked"
                    found.append(Finding(path, "", "corrupt", why))
                else:
                    found += _trace_line(path, n, raw.decode("utf-8", "replace"), literal)
    except OSError as exc:
        return [Finding(path, "", "corrupt", f"not readable: {one_line(exc)}")]
    return found


def _trace_line(path: Path, n: int, line: str, literal: Sequence[str]) -> list[Finding]:
    """The findings of line ``n`` of a span file."""
    found: list[Finding] = []
    try:
        data = json.loads(line)
    except RecursionError:  # nested past the parser's depth (a traceback before, round 16
        data = line  # B): its text is searched as it is
    except ValueError:
        return found  # not a span line; traces show reports those
    for where, text in _strings(data, f"line {n}"):
        found += _looks(path, where, text)
        found += _literal(path, where, text, literal)
        for inner, decoded in _json_strings(text):  # a body held in a span attribute
            found += _looks(path, f"{where} {inner}", decoded, seen=text)
            found += _literal(path, f"{where} {inner}", decoded, literal, seen=text)
    return found


def _literal(
    path: Path, where: str, text: str, secrets: Sequence[str], seen: str = ""
) -> Iterator[Finding]:
    for secret in secrets:
        if secret in text and secret not in seen:
            yield Finding(path, where, "env-secret", _mask(secret))


def lint_main(
    directory: str | os.PathLike[str],
    echo: Callable[[str], None] = print,
    traces: Sequence[str | os.PathLike[str]] = (),
) -> int:
    """The CLI: print the findings; 0 when clean, 1 on a secret, 2 on a corrupt file. Trace
    files (``*.jsonl`` under ``traces``, files or folders) are checked for secrets too."""
    try:
        files = cassette_files(directory)
    except ConfigError as exc:
        echo(str(exc))
        return 2
    trace_files = sorted(
        f
        for t in traces
        for f in ([Path(t)] if Path(t).is_file() else Path(t).rglob("*.jsonl"))
        if f.is_file()
    )
    findings = [f for path in files for f in lint_file(path)]
    findings += [f for path in trace_files for f in lint_trace_file(path)]
    for finding in findings:
        echo(str(finding))
    corrupt = [f for f in findings if f.rule == "corrupt"]
    secrets = [f for f in findings if f.rule != "corrupt"]
    if secrets:
        echo(f"{len(secrets)} secret-looking value(s) in {len({f.path for f in secrets})} file(s)")
    if corrupt:
        echo(f"{len(corrupt)} corrupt cassette file(s)")
        return 2
    if secrets:
        return 1
    traced = f" and {len(trace_files)} trace file(s)" if trace_files else ""
    echo(f"{len(files)} cassette(s){traced} clean under {directory}")
    return 0
