"""Which providers ``--providers auto`` replays: the mock plus every provider with recorded
cassettes, each for the cells it has a cassette of; retired profiles are left out."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from harness.bench._matrix import Cell

__all__ = ["discover_providers", "recorded"]

log = logging.getLogger("harness.bench")


def discover_providers(cassettes: Path, suites: Sequence[str]) -> list[str]:
    """``mock`` plus every provider that has recorded cassettes for these suites (the folder
    names under ``cassettes/<suite>/``), so the default bench replays whatever was recorded.
    The bench then runs a discovered provider only on the suites it has a folder for."""
    found: set[str] = set()
    for suite in suites:
        folder = cassettes / suite
        if folder.is_dir():
            found.update(p.name for p in folder.iterdir() if p.is_dir())
    return ["mock", *sorted(name for name in found - {"mock"} if not _retired(name))]


def _retired(name: str) -> bool:
    """Whether the profile ``name`` is retired (its reason is logged once per run)."""
    from harness.providers._profiles import load_profiles

    profile = load_profiles().get(name)
    if profile is None or profile.retired is None:
        return False
    log.warning("skipping retired provider %s: %s", name, profile.retired)
    return True


def recorded(cell: Cell, cassettes: Path) -> bool:
    """Whether a discovered provider's cell has its cassette: recordings are made (and
    committed) in chunks, so a suite may be recorded for some tasks, modes or epochs only. A
    cassette lost from a complete recording shows as a missing cell at the gate."""
    path = cell.cassette(cassettes)
    return path is not None and path.is_file()
