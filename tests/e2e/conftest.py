"""Fixtures of the end-to-end tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.edited_store import store_two_cells


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database holding one run of two cells, and its baseline (one per test module; a
    module may define its own ``stored``)."""
    return store_two_cells(tmp_path_factory.mktemp("stored"))
