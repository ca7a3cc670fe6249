"""Which values are secrets, for scrubbing cassettes, trace files, stored rows and reports.

A secret is: every value of a header a provider profile declares (``headers``), the key named by
the profile's ``api_key_env``, and the value of every environment variable whose name ends in
``_KEY``, ``_TOKEN`` or ``_SECRET`` (values shorter than 8 characters are left alone: they
cannot be told from ordinary text). A ``Bearer xyz`` header value also yields ``xyz``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = ["MIN_SECRET_CHARS", "scrub_file", "scrub_text", "secret_values"]

MIN_SECRET_CHARS = 8
PLACEHOLDER = "REDACTED"
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


def scrub_text(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, PLACEHOLDER)
    return text


def scrub_file(path: Path, secrets: list[str]) -> int:
    """Replace every secret in a text file, in place; returns how many values were replaced."""
    if not secrets or not path.is_file():
        return 0
    count = 0
    with path.open(encoding="utf-8", errors="surrogateescape") as f:
        for line in f:  # line by line: a span file may be larger than memory
            count += sum(line.count(s) for s in secrets)
    if count:
        tmp = path.with_suffix(path.suffix + ".scrub")
        with (
            path.open(encoding="utf-8", errors="surrogateescape") as src,
            tmp.open("w", encoding="utf-8", errors="surrogateescape") as dst,
        ):
            for line in src:
                dst.write(scrub_text(line, secrets))
        os.replace(tmp, path)
    return count
