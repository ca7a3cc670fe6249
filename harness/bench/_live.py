"""The live pre-flight of ``harness run``: before the first cell, each provider whose cells will
reach the network is probed once, and a provider that fails is not run.

A provider is *live* in a run when it is not the mock and the record mode lets a cell reach its
server: ``all`` and ``new_episodes`` always, ``once`` when a cell of it has no cassette yet.
Replays (record mode ``none``, or ``once`` with every cassette there) are never probed.

The probe, in order, each failure ending it with one line:

1. **reachable**: the server answers where it lists its models (``GET /v1/models``, Ollama's
   ``/api/tags``); a refused connection or a timeout is "not reachable";
2. **model present**: when that list could be read, the model is in it (by id or alias, as
   ``NAME:latest`` for Ollama, as the file name of a GGUF path that contains the model's name
   for llama-server started without ``--alias``, or by the dated id of a ``-latest`` alias);
3. **the system message**: :func:`harness.providers._preflight.check_system_message`, which
   also sends one request naming the model (a server that does not know it answers an error).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.bench._matrix import Cell
from harness.errors import HarnessError, ProviderError
from harness.providers._preflight import check_system_message
from harness.telemetry._escape import escape_controls

__all__ = ["live_providers", "model_listed", "preflight", "probe"]

#: Seconds for the listing request (the system-message probe has its own, longer, limit).
LIST_TIMEOUT_S = 10.0


def live_providers(cells: Sequence[Cell], cassettes: Path, record_mode: str) -> list[str]:
    """The providers of ``cells`` that will reach their server, in matrix order."""
    if record_mode == "none":
        return []
    live: dict[str, None] = {}
    for cell in cells:
        if cell.is_mock or cell.provider in live:
            continue
        if record_mode == "once":
            path = cell.cassette(cassettes)
            if path is not None and path.is_file():
                continue  # replayed
        live[cell.provider] = None
    return list(live)


def model_listed(model: str, names: Sequence[str]) -> bool:
    """Whether a server listing ``names`` serves ``model`` (see the module's rule 2)."""
    wanted = model.lower()
    stem = wanted.removesuffix("-latest")
    for raw in names:
        name = raw.lower()
        if name in (wanted, f"{wanted}:latest"):
            return True
        if name.endswith(".gguf") and wanted in name.rsplit("/", 1)[-1]:
            return True
        if stem != wanted and name.startswith(stem):
            return True
    return False


def _names(listing: Any) -> list[str] | None:
    """Model names from an OpenAI/Anthropic (``data``) or Ollama (``models``) listing."""
    if not isinstance(listing, dict):
        return None
    entries = listing.get("data", listing.get("models"))
    if not isinstance(entries, list):
        return None
    names: list[str] = []
    for entry in entries:
        if isinstance(entry, dict):
            for key in ("id", "name", "model"):
                if isinstance(entry.get(key), str):
                    names.append(entry[key])
            aliases = entry.get("aliases")
            if isinstance(aliases, list):
                names += [a for a in aliases if isinstance(a, str)]
    return names


async def probe(spec: str, *, timeout_s: float = 120.0) -> str | None:
    """None when ``spec``'s server is ready, else one line saying what is wrong."""
    from harness.providers._registry import resolve_provider

    try:
        provider, model, owned = resolve_provider(spec, None, {"max_retries": 0})
    except HarnessError as exc:
        return str(exc)
    http = getattr(provider, "http", None)
    path = getattr(provider, "models_path", None)
    where = getattr(http, "shown_url", "its base URL")
    try:
        if http is not None and path:
            try:
                listing = await http.get_json(path, timeout_s=LIST_TIMEOUT_S)
            except ProviderError as exc:
                if exc.kind in ("transport", "timeout"):
                    return f"not reachable at {where}: {exc.message}"
                listing = None  # no listing here (404, ...): the probe's request decides
            names = _names(listing)
            if model and names and not model_listed(model, names):
                shown = ", ".join(_shown(name) for name in names[:5])  # a server's: one line
                shown += ", ..." if len(names) > 5 else ""
                return (
                    f"model {model!r} is not served at {where} (it lists: {shown}); start the "
                    "server with that model (llama-server: --alias), or name the model it has"
                )
    finally:
        if owned:
            await provider.aclose()
    result = await check_system_message(spec, timeout_s=timeout_s)
    return None if result.ok else result.reason


def _shown(name: str) -> str:
    """A model name a server lists, escaped and cut to 200 characters (a name of a megabyte
    was printed whole, twice; adversary round 19, part B)."""
    return escape_controls(name if len(name) <= 200 else f"{name[:200]}...")


def preflight(
    cells: Sequence[Cell], cassettes: Path, record_mode: str
) -> tuple[list[Cell], dict[str, str]]:
    """Probe the live providers of ``cells`` (at once); returns the cells left to run and, per
    refused provider, its one-line reason."""
    live = live_providers(cells, cassettes, record_mode)
    if not live:
        return list(cells), {}

    async def all_probes() -> list[str | None]:
        return await asyncio.gather(*(probe(spec) for spec in live))

    reasons = asyncio.run(all_probes())
    refused = {spec: why for spec, why in zip(live, reasons, strict=True) if why is not None}
    return [c for c in cells if c.provider not in refused], refused
