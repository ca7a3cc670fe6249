"""The viewer in a real browser: Playwright driving Debian's chromium against the real server.

Skipped only when chromium (or Playwright) is missing; ``HARNESS_REQUIRE_CHROMIUM=1`` (``nox -s
screenshot``, CI) turns that into a failure. With ``HARNESS_SCREENSHOT_DIR`` each page's
screenshot is saved there (docs/viewer.md shows them).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _missing(what: str) -> None:
    if os.environ.get("HARNESS_REQUIRE_CHROMIUM"):
        pytest.fail(f"HARNESS_REQUIRE_CHROMIUM is set but {what}")
    pytest.skip(what)


@contextmanager
def browser_page() -> Iterator[Any]:
    """A Playwright page in Debian's chromium (skips, or fails under HARNESS_REQUIRE_CHROMIUM,
    when chromium or Playwright is missing)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        _missing("chromium is not installed (Debian: apt-get install -y chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("playwright is not installed (pip install 'athena-harness[test]')")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(20_000)
            yield page
        finally:
            browser.close()


@pytest.fixture(scope="module")
def page() -> Iterator[Any]:
    with browser_page() as page:
        yield page


def _shot(page: Any, name: str, selector: str | None = None) -> None:
    """Save the viewport (or one element) as ``view-NAME.png`` in $HARNESS_SCREENSHOT_DIR."""
    keep = os.environ.get("HARNESS_SCREENSHOT_DIR")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        path = str(Path(keep) / f"view-{name}.png")
        if selector is None:
            page.screenshot(path=path, full_page=False)
        else:
            page.locator(selector).screenshot(path=path)


@pytest.mark.timeout(180)
def test_the_user_journey_in_chromium(
    page: Any, server: str, bench_db: tuple[Path, str, str]
) -> None:
    """Runs -> a run -> the grid filtered -> a failed cell: transcript, grader explanation,
    span waterfall and trace link -> two runs compared."""
    _, first, second = bench_db
    page.goto(server + "/")
    runs = page.locator("#runs tbody tr")
    assert runs.count() == 2
    assert page.locator("#runs").inner_text().count("finished") == 2
    _shot(page, "runs")

    page.click(f"#runs a[href='/runs/{first}']")
    page.wait_for_url(f"**/runs/{first}")
    assert page.locator("#summary figure.chart svg").count() == 4
    chips = page.locator("#grid a.chip")
    assert chips.count() > 0
    assert page.locator("#grid a.chip.failed").count() > 0
    _shot(page, "run")

    # Filter the grid: failed cells only (the script submits on change).
    page.select_option("#filter-status", "failed")
    page.wait_for_url("**status=failed**")
    statuses = set(page.locator("#grid a.chip").evaluate_all("els => els.map(e => e.className)"))
    assert statuses == {"chip failed"}
    # The default sort puts the tasks that separate the modes first.
    spreads = [float(s) for s in page.locator("#grid tbody tr").evaluate_all(
        "els => els.map(e => e.dataset.spread)")]  # fmt: skip
    assert spreads == sorted(spreads, reverse=True)
    _shot(page, "grid-failed", "#grid-section")

    page.locator("#grid a.chip.failed").first.click()
    page.wait_for_url("**/cell?key=**")
    assert page.locator("#verdict .status").inner_text() == "failed"
    explanation = page.locator("#grader-explanation").inner_text()
    assert explanation.startswith("Grader:")
    assert "(no explanation)" not in explanation
    messages = page.locator("#transcript li.msg")
    assert messages.count() >= 2
    assert page.locator("#transcript li.role-user").first.inner_text().strip() != "USER"
    bars = page.locator("#waterfall .span-bar")
    assert bars.count() >= 3
    box = bars.first.bounding_box()
    assert box is not None
    assert box["width"] > 50
    href = page.locator("#trace-link").get_attribute("href")
    assert href is not None
    assert href.startswith("http://localhost:16686/trace/")
    assert len(href.rsplit("/", 1)[1]) == 32
    _shot(page, "cell")
    _shot(page, "cell-spans", "#spans")

    page.goto(f"{server}/compare?a={first}&b={second}")
    assert "missing" in page.locator("#flip-counts").inner_text()  # reflexion: first run only
    assert page.locator("#compare tbody tr").count() > 0
    _shot(page, "compare")
