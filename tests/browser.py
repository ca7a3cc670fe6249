"""Debian's chromium for the browser tests (the report's and the viewer's): a Playwright page
driving it (``executable_path``; Playwright's own browser download does not work here).

A missing chromium or Playwright skips the test, or fails it when ``HARNESS_REQUIRE_CHROMIUM``
is set (``nox -s screenshot`` and CI set it)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

import pytest

__all__ = ["CHROMIUM_ARGS", "browser_page", "chromium_path", "missing"]

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def missing(what: str) -> NoReturn:
    """Skip for ``what`` (fail under ``HARNESS_REQUIRE_CHROMIUM``)."""
    if os.environ.get("HARNESS_REQUIRE_CHROMIUM"):
        pytest.fail(f"HARNESS_REQUIRE_CHROMIUM is set but {what}")
    pytest.skip(what)


def chromium_path() -> str:
    """The chromium executable (skips or fails when there is none)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        missing("chromium is not installed (Debian: apt-get install -y chromium)")
    return found


@contextmanager
def browser_page(width: int = 1400, height: int = 1000) -> Iterator[Any]:
    """A Playwright page in Debian's chromium, closed at the end."""
    chromium = chromium_path()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("playwright is not installed (pip install 'athena-harness[test]')")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.set_default_timeout(20_000)
            yield page
        finally:
            browser.close()
