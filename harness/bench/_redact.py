"""The one secret redactor of a run: what it scrubs from rows, spans, the trace file, OTLP,
log records and the terminal."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from harness.cassettes._secrets import Redactor, secret_values

__all__ = ["run_redactor"]


def run_redactor(providers: Sequence[str], cassettes: Path | None = None) -> Redactor:
    """The redactor of the secrets of the ``providers`` (specs) and of the environment: the
    values of their headers and API-key variables, and of every secret-named variable.
    With ``auto`` among them (not yet resolved, as the command line has it) and a
    ``cassettes`` folder, the provider of every folder under ``cassettes/<suite>/`` counts too:
    any of them may be replayed."""
    specs = list(providers)
    if "auto" in specs and cassettes is not None and cassettes.is_dir():
        specs += [
            p.name for suite in cassettes.iterdir() if suite.is_dir() for p in suite.iterdir()
        ]
    return Redactor(secret_values(specs), cut_heads=True)  # rows and spans hold cut texts
