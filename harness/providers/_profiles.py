"""Provider profiles: what a spec string such as ``openai:gpt-4o-mini`` or ``llamacpp-gemma``
means - the wire format (``kind``), where to send it, which model, which key, what it costs.

Built-in profiles follow the official SDKs' environment conventions: ``openai``
(``OPENAI_BASE_URL``, ``OPENAI_API_KEY``), ``anthropic`` / ``claude`` (``ANTHROPIC_BASE_URL``,
``ANTHROPIC_API_KEY``), ``ollama`` (``OLLAMA_HOST``, no key). Named profiles come from
``harness.toml`` (``[providers.NAME]``) or ``pyproject.toml`` (``[tool.harness.providers.NAME]``)
in the working directory::

    [tool.harness.providers.llamacpp-gemma]
    kind = "openai"
    base_url = "http://127.0.0.1:8080/v1"
    model = "gemma-3-270m"
    prices = {input_per_mtok = 0, output_per_mtok = 0}   # local: free, explicitly

Keys are read from the environment variable the profile names, never from files.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from harness._files import MAX_INPUT_BYTES, read_regular
from harness._toml import loads_toml
from harness._urls import masked_text
from harness._yaml import safe_load_bounded
from harness.errors import ConfigError, YAMLSyntaxError

__all__ = [
    "BUILTIN_PROFILES",
    "DEFAULT_DEADLINE_S",
    "OVERRIDES_ENV",
    "Example",
    "Prices",
    "ProviderProfile",
    "load_profiles",
    "resolve_profile",
    "url_problem",
    "usable_url",
]

#: A provider kind: a built-in wire format or a registered one (harness.providers._kinds).
Kind = str

#: The wall-clock bound of one call, retries included, when the profile sets none: an hour
#: (a slow local model writes about a token a second; a completion is capped by max_tokens).
DEFAULT_DEADLINE_S = 3600.0
#: The highest price a profile may set (USD per million tokens): ``1e308`` or TOML's ``inf``
#: priced calls at ``inf``, error cells blaming the provider (adversary round 21, part B).
_MAX_PRICE = 1e6

_HEADER_ONLY = "an HTTP header can carry printable ASCII only"


def usable_url(url: str | None) -> str | None:
    """``url`` if httpx can send to it, else a ValueError saying why (a control character, a
    port past 65535, an unclosed ``[``, a scheme other than http or https, no host, a host no
    IDNA encoding takes): a profile's ``base_url`` and a ``provider_opts`` one (a judge's passed
    ``suites validate`` and failed every grading). A bare ``host:port`` is left to
    :meth:`ProviderProfile.resolved_base_url` (ollama's ``OLLAMA_HOST`` form)."""
    if url is not None and (problem := url_problem(url, bare_ok=True)):
        raise ValueError(masked_text(f"{url!a} is no usable address: {problem}", url))
    return url


def url_problem(url: str, *, bare_ok: bool = False) -> str | None:
    """Why httpx cannot send to ``url``, or None (``bare_ok``: one without a scheme passes)."""
    import httpx  # here: importing harness must not import httpx

    try:
        parsed = httpx.URL(url)
        port = parsed.port
        if parsed.scheme or not bare_ok:
            httpx.Request("GET", parsed)  # encodes the host (IDNA): `xn--zz` failed each call
    except (httpx.InvalidURL, UnicodeError) as exc:
        return str(exc) or type(exc).__name__
    if port is not None and not 0 < port <= 65535:
        return f"port {port} is not 1-65535"
    if parsed.scheme or not bare_ok:
        if parsed.scheme not in ("http", "https"):
            return "it must begin with http:// or https://"
        if not parsed.host:
            return "it names no host"
        if b"?" in parsed.raw_path:  # httpx adds a request's path after it: into the query
            return "it has a query ('?...'), which each request's path would be added to"
    return None


def _header_problem(value: str) -> str | None:
    """Why ``value`` cannot be sent as an HTTP header value (httpx encodes it as ASCII: a key
    of undecodable bytes made every cell an error cell), naming the byte, never the value."""
    for i, char in enumerate(value):  # every character before the first bad one is one byte
        if ord(char) > 126:
            return f"not ASCII (byte {i})"
        if ord(char) < 32:
            return f"a control character (byte {i})"
    return None


class Prices(BaseModel):
    """USD per million tokens. Overrides the price source for a profile."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input_per_mtok: float = Field(ge=0, le=_MAX_PRICE)
    output_per_mtok: float = Field(ge=0, le=_MAX_PRICE)
    cache_read_per_mtok: float | None = Field(default=None, ge=0, le=_MAX_PRICE)
    cache_write_per_mtok: float | None = Field(default=None, ge=0, le=_MAX_PRICE)


class Example(BaseModel):
    """One few-shot conversation: messages in the kernel's own form, rendered through the
    profile's tool protocol like the real conversation. Sent only with requests that offer
    every tool it calls (``tools``, default: the tools its messages call)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    messages: tuple[dict[str, Any], ...] = Field(min_length=1)
    tools: tuple[str, ...] | None = None

    @field_validator("messages")
    @classmethod
    def _roles(cls, messages: tuple[dict[str, Any], ...]) -> tuple[dict[str, Any], ...]:
        for i, message in enumerate(messages):
            role = message.get("role")
            if role not in ("user", "assistant", "tool"):
                raise ValueError(
                    f"messages[{i}]: role must be user, assistant or tool, got {role!r}"
                )
        return messages

    def tool_names(self) -> tuple[str, ...]:
        if self.tools is not None:
            return self.tools
        names: list[str] = []
        for message in self.messages:
            for call in message.get("tool_calls") or ():
                name = call.get("name") if isinstance(call, dict) else None
                if isinstance(name, str) and name not in names:
                    names.append(name)
        return tuple(names)


class ProviderProfile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    kind: Kind
    base_url: str | None = None
    base_url_env: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    api_key_required: bool = False
    prices: Prices | None = None
    tool_calls: Literal["native", "text"] = "native"
    #: How OpenAI-format bodies name the completion cap.
    max_tokens_param: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    stream: bool = True
    timeout_s: float = Field(default=300.0, gt=0)
    #: The wall-clock bound of one call, retries included (``timeout_s`` bounds each read).
    deadline_s: float | None = Field(
        default=DEFAULT_DEADLINE_S, gt=0, allow_inf_nan=False, strict=True
    )
    max_retries: int = Field(default=3, ge=0, le=10)
    retry_initial_s: float = Field(default=0.5, ge=0)
    context_window: int | None = Field(default=None, gt=0)
    headers: dict[str, str] = Field(default_factory=dict)
    #: How text-mode tool calls are written: a fenced ``tool_call`` block, or one line
    #: ``<tool_call>{...}</tool_call>`` (for servers stopped at the end of a line).
    text_tool_format: Literal["fenced", "line"] = "fenced"
    #: Few-shot conversations sent before the real one with every request that offers tools
    #: (inline, or ``examples_file`` beside the profile's file). See :class:`Example`.
    examples: tuple[Example, ...] = ()
    examples_file: str | None = None
    #: Stop strings added to every request (small base models run on into invented turns).
    stop: tuple[str, ...] = ()
    #: Price the real token counts at this model's genai-prices rates (``MODEL`` under the
    #: profile's kind, or ``PROVIDER:MODEL``); reports say "priced as MODEL".
    price_as: str | None = None
    #: Whether the server honours a request's ``seed`` (recorded in docs and cassettes).
    seeds: Literal["honoured", "ignored", "unknown"] = "unknown"
    #: Why this profile's recordings are kept out of the default bench (``--providers auto``)
    #: and its reports, e.g. a server that never showed the model its system message; they
    #: still replay when the profile is named.
    retired: str | None = None
    #: Read a reply that is only a tool call written as bare JSON (no chat-format markup) as
    #: that call, marked as repaired (harness.providers._bare_calls). Native calls only.
    bare_json_calls: bool = False
    #: The sampling temperature of every request of this profile, whatever the suite asks: a
    #: model recorded greedily (``0``) stays greedy, and then sends no seed (nothing to seed).
    temperature: float | None = Field(default=None, ge=0, le=2)
    #: The completion cap sent when a request sets none, so that no request can generate
    #: without end (and an abandoned one stops at this cap at the latest).
    max_tokens: int | None = Field(default=None, gt=0)

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, kind: str) -> str:
        from harness.providers._kinds import PROVIDER_KINDS

        if kind not in PROVIDER_KINDS:
            raise ValueError(PROVIDER_KINDS.unknown(kind))
        return kind

    @model_validator(mode="after")
    def _one_price_source(self) -> ProviderProfile:
        if self.prices is not None and self.price_as:
            raise ValueError("set either prices or price_as, not both")
        return self

    @field_validator("base_url")
    @classmethod
    def _usable_url(cls, url: str | None) -> str | None:
        return usable_url(url)

    @field_validator("headers")
    @classmethod
    def _sendable_headers(cls, headers: dict[str, str]) -> dict[str, str]:
        for name, value in headers.items():
            if problem := _header_problem(name) or _header_problem(value):
                raise ValueError(f"header {name!a}: {problem}; {_HEADER_ONLY}")
        return headers

    def resolved_base_url(self, override: str | None = None) -> str:
        from_env = os.environ.get(self.base_url_env) if self.base_url_env else None
        url = override or from_env or self.base_url
        source = f"${self.base_url_env}" if url == from_env and not override else "base_url"
        if not url:
            raise ConfigError(f"provider {self.name!r}: no base_url (set it in the profile)")
        if self.kind == "ollama" and not url.startswith(("http://", "https://")):
            # OLLAMA_HOST is often host[:port]; as the official client does, the host defaults
            # to 127.0.0.1 and the port to 11434 ("0.0.0.0" -> http://0.0.0.0:11434).
            host, slash, path = url.partition("/")
            if host.startswith(":"):
                host = f"127.0.0.1{host}"
            if not re.search(r":\d+$", host):
                host = f"{host}:11434"
            url = f"http://{host}{slash}{path}"
        if problem := url_problem(url):  # $OPENAI_BASE_URL was not checked; its error named
            raise ConfigError(  # the profile's own base_url (adversary round 17, part B)
                masked_text(
                    f"provider {self.name!r}: {source} {url!a} is no usable address: {problem}",
                    url,
                )
            )
        return url.rstrip("/")

    def api_key(self) -> str | None:
        """The key in ``api_key_env``; ConfigError when it is required and not set, or cannot
        go in an HTTP header (the message names the variable and the byte, never the key)."""
        if not self.api_key_env:
            return None
        key = os.environ.get(self.api_key_env)
        if not key and self.api_key_required:
            raise ConfigError(
                f"provider {self.name!r}: no API key; set the environment variable "
                f"{self.api_key_env} (keys are never read from files)"
            )
        if key and (problem := _header_problem(key)):
            raise ConfigError(f"{self.api_key_env}: {problem}; {_HEADER_ONLY}: set it again")
        return key or None


BUILTIN_PROFILES: dict[str, ProviderProfile] = {
    "openai": ProviderProfile(
        name="openai",
        kind="openai",
        base_url="https://api.openai.com/v1",
        base_url_env="OPENAI_BASE_URL",
        api_key_env="OPENAI_API_KEY",
        api_key_required=True,
        max_tokens_param="max_completion_tokens",
    ),
    "anthropic": ProviderProfile(
        name="anthropic",
        kind="anthropic",
        base_url="https://api.anthropic.com",
        base_url_env="ANTHROPIC_BASE_URL",
        api_key_env="ANTHROPIC_API_KEY",
        api_key_required=True,
    ),
    "ollama": ProviderProfile(
        name="ollama",
        kind="ollama",
        base_url="http://127.0.0.1:11434",
        base_url_env="OLLAMA_HOST",
        prices=Prices(input_per_mtok=0, output_per_mtok=0),
    ),
    "mock": ProviderProfile(name="mock", kind="mock"),
}
BUILTIN_PROFILES["claude"] = BUILTIN_PROFILES["anthropic"].model_copy(update={"name": "claude"})


_FILES = (("pyproject.toml", ("tool", "harness", "providers")), ("harness.toml", ("providers",)))
_cache: dict[Path, tuple[tuple[tuple[int, int] | str | None, ...], dict[str, ProviderProfile]]] = {}


def load_profiles(directory: str | os.PathLike[str] | None = None) -> dict[str, ProviderProfile]:
    """Named profiles from harness.toml / pyproject.toml in ``directory`` (default: cwd).

    Parsed once and cached until either file changes (size or mtime)."""
    base = Path(directory) if directory is not None else Path.cwd()
    overrides = os.environ.get(OVERRIDES_ENV, "")
    stamp = (*(_stamp(base / name) for name, _ in _FILES), overrides)
    cached = _cache.get(base)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    found = _parse_files(base)
    if overrides:
        found = _override(found, overrides)
    _cache[base] = (stamp, found)
    return found


#: Field overrides of profiles, JSON ``{"NAME": {"FIELD": VALUE}}``: what ``harness run
#: --provider-opt NAME.FIELD=VALUE`` sets, so that every process of the run sees them.
OVERRIDES_ENV = "HARNESS_PROVIDER_OPTS"


def _override(found: dict[str, ProviderProfile], text: str) -> dict[str, ProviderProfile]:
    import json

    where = f"${OVERRIDES_ENV} (--provider-opt)"
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"{where}: not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: must be a JSON object of profile names")
    out = dict(found)
    for name, fields in data.items():
        earlier = out.get(name) or (BUILTIN_PROFILES.get(name) if name != "mock" else None)
        if earlier is None:
            known = ", ".join(sorted({*out, *BUILTIN_PROFILES} - {"mock"}))
            raise ConfigError(f"--provider-opt: no provider profile {name!r}; known: {known}")
        if not isinstance(fields, dict):
            raise ConfigError(f"{where}: {name}: must be an object of fields")
        out[name] = _profile(Path(where), (), name, fields, earlier)
    return out


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def _parse_files(base: Path) -> dict[str, ProviderProfile]:
    """Profiles of pyproject.toml, then harness.toml. A table naming a profile defined before
    (a built-in one, or one of pyproject.toml) overrides only the fields it sets."""
    found: dict[str, ProviderProfile] = {}
    for filename, keys in _FILES:
        path = base / filename
        if not path.is_file():
            continue
        try:
            data: Any = loads_toml(read_regular(path, limit=MAX_INPUT_BYTES).decode("utf-8"))
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read it: {exc.strerror or exc}") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: not valid TOML: {exc}") from None
        for key in keys:
            data = data.get(key, {}) if isinstance(data, dict) else {}
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: [{'.'.join(keys)}] must be a table of profiles")
        for name, table in data.items():
            earlier = found.get(name) or (BUILTIN_PROFILES.get(name) if name != "mock" else None)
            found[name] = _profile(path, keys, name, table, earlier)
    return found


def _profile(
    path: Path,
    keys: tuple[str, ...],
    name: str,
    table: Any,
    earlier: ProviderProfile | None = None,
) -> ProviderProfile:
    where = f"{path} [{'.'.join((*keys, name))}]"
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where}: must be a table")
    if any(c in name for c in ":,"):  # --providers NAME:MODEL,... could never name it
        raise ConfigError(
            f"{where}: a profile name cannot hold ':' or ',' (--providers reads "
            "NAME:MODEL, comma-separated); rename it"
        )
    if any(key in table for key in ("api_key", "key", "token")):
        raise ConfigError(
            f"{where}: API keys do not belong in files; name an environment variable with "
            "api_key_env instead"
        )
    table = dict(table)
    if isinstance(table.get("examples_file"), str) and "examples" not in table:
        table["examples"] = _read_examples(path.parent / table["examples_file"], where)
    if earlier is not None:  # override the fields this table sets, keep the others
        table = {**earlier.model_dump(exclude={"name"}, exclude_defaults=True), **table}
    try:
        return ProviderProfile.model_validate({"name": name, **table})
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        raise ConfigError(f"{where}: {field}: {err['msg']}") from None


def resolve_profile(
    spec: str, directory: str | os.PathLike[str] | None = None
) -> tuple[ProviderProfile, str | None]:
    """``NAME[:MODEL]`` -> (profile, model). Named profiles shadow the builtins, except
    ``mock``, which is always the in-process scripted provider."""
    name, _, model = spec.partition(":")
    if name == "mock":
        return BUILTIN_PROFILES["mock"], model or None
    profiles = {**BUILTIN_PROFILES, **load_profiles(directory)}
    profile = profiles.get(name)
    if profile is None:
        import difflib

        close = difflib.get_close_matches(name, list(profiles), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(
            f"provider: unknown provider {name!r} in {spec!r}{hint}. Known: "
            f"{', '.join(sorted(profiles))}; define others under [tool.harness.providers.NAME] "
            "in pyproject.toml or [providers.NAME] in harness.toml"
        )
    return profile, model or profile.model


def _read_examples(path: Path, where: str) -> Any:
    """The examples of a profile's ``examples_file`` (YAML or JSON: a list of examples)."""
    import yaml

    try:
        raw = read_regular(path, limit=MAX_INPUT_BYTES)  # a FIFO: refused
        data = safe_load_bounded(raw, source=str(path))
    except OSError as exc:
        raise ConfigError(f"{where}: examples_file {path}: {exc.strerror or exc}") from None
    except (yaml.YAMLError, YAMLSyntaxError) as exc:
        raise ConfigError(f"{where}: examples_file {path}: not valid YAML: {exc}") from None
    if not isinstance(data, list):
        raise ConfigError(f"{where}: examples_file {path}: must hold a list of examples")
    return data
