"""The viewer in a real browser: Playwright driving Debian's chromium against the real server.

Skipped only when chromium (or Playwright) is missing; ``HARNESS_REQUIRE_CHROMIUM=1`` (``nox -s
screenshot``, CI) turns that into a failure. With ``HARNESS_SCREENSHOT_DIR`` each page's
screenshot is saved there (docs/viewer.md shows them).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import browser_page

#: Spawns processes, sandboxes, browsers, clusters or servers (the fast loop skips it).
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def page() -> Iterator[Any]:
    with browser_page() as page:
        yield page


def _shot(page: Any, name: str, selector: str | None = None) -> None:
    """Save the viewport (or one element) as ``view-NAME-WIDTH.png`` in
    $HARNESS_SCREENSHOT_DIR."""
    keep = os.environ.get("HARNESS_SCREENSHOT_DIR")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        width = page.viewport_size["width"]
        path = str(Path(keep) / f"view-{name}-{width}.png")
        if selector is None:
            page.screenshot(path=path, full_page=False)
        else:
            page.locator(selector).screenshot(path=path)


#: Pairs of overlapping text boxes inside the page's charts (measured by the browser).
OVERLAPS_JS = """
() => {
  const found = [];
  for (const svg of document.querySelectorAll('svg.chart-svg')) {
    const boxes = [...svg.querySelectorAll('text')]
      .map(t => [t.textContent, t.getBoundingClientRect()]);
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length; j++) {
        const [ta, a] = boxes[i], [tb, b] = boxes[j];
        const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        if (w > 0.5 && h > 0.5) found.push([svg.closest('figure').id, ta, tb]);
      }
    }
  }
  return found;
}
"""

#: How far the page scrolls sideways (0: everything fits the window or scrolls in a frame).
SIDEWAYS_JS = "() => document.documentElement.scrollWidth - window.innerWidth"


@pytest.mark.timeout(300)
@pytest.mark.parametrize("width", [1400, 800])
def test_the_user_journey_in_chromium(
    page: Any, server: str, bench_db: tuple[Path, str, str], width: int
) -> None:
    """Runs -> a run (the verdict first, charts whose labels never overlap) -> the grid
    searched and filtered -> a failed cell: transcript first, grader explanation, span
    waterfall and trace link -> two runs compared (groups first, flips only); at 1,400 and at
    800 px, nothing wider than the window but the frames that scroll by themselves."""
    _, first, second = bench_db
    page.set_viewport_size({"width": width, "height": 1000})
    page.goto(server + "/")
    runs = page.locator("#runs tbody tr")
    assert runs.count() == 2
    assert page.locator("#runs").inner_text().count("finished") == 2
    _shot(page, "runs")

    page.click(f"#runs a[href='/runs/{first}']")
    page.wait_for_url(f"**/runs/{first}")
    page.wait_for_selector("#comparisons")  # the verdict (fetched if it was still computing)
    verdict, summary = (page.locator(s).bounding_box() for s in ("#verdict", "#summary"))
    assert verdict is not None
    assert summary is not None
    assert verdict["y"] < summary["y"]
    assert page.locator("#summary figure.chart svg").count() == 4
    assert page.evaluate(OVERLAPS_JS) == []
    assert page.evaluate(SIDEWAYS_JS) <= 0
    chips = page.locator("#grid a.chip")
    assert chips.count() > 0
    assert page.locator("#grid a.chip.failed").count() > 0
    # The grid scrolls inside its own frame.
    frame = page.locator("#grid-frame")
    assert frame.evaluate("e => getComputedStyle(e).overflow") == "auto"
    box = frame.bounding_box()
    assert box is not None
    assert box["height"] <= 0.75 * 1000 + 1  # never taller than 75% of the window
    assert box["x"] + box["width"] <= width
    _shot(page, "run")
    _shot(page, "run-charts", "#charts")

    # Filter the grid: failed cells of one mode only (the script submits on change); the
    # charts follow.
    page.select_option("#filter-status", "failed")
    page.wait_for_url("**status=failed**")
    page.select_option("#filter-mode", "react")
    page.wait_for_url("**mode=react**")
    statuses = set(page.locator("#grid a.chip").evaluate_all("els => els.map(e => e.className)"))
    assert statuses == {"chip failed"}
    assert page.locator("#grid thead th").count() == 2  # task + react / mock
    labels = page.locator("#chart-pass-rate text").all_text_contents()
    assert "react / mock" in labels
    assert "reflexion / mock" not in labels
    # The default sort puts the tasks that separate the modes first.
    spreads = [float(s) for s in page.locator("#grid tbody tr").evaluate_all(
        "els => els.map(e => e.dataset.spread)")]  # fmt: skip
    assert spreads == sorted(spreads, reverse=True)
    # Search answers and transcripts, answers shown in the grid.
    page.fill("#filter-q", "calculator")
    page.check("#filter-answers")
    page.wait_for_url("**answers=1**")
    if "q=calculator" not in page.url:
        page.fill("#filter-q", "calculator")
        page.press("#filter-q", "Enter")
        page.wait_for_url("**q=calculator**")
    assert "matching “calculator”" in page.locator("#grid-count").inner_text()
    assert page.locator("#grid .answer").count() > 0
    title = page.locator("#grid a.chip").first.get_attribute("title")
    assert title is not None
    assert "answer:" in title
    assert page.evaluate(OVERLAPS_JS) == []
    _shot(page, "grid-filtered", "#grid-section")

    page.locator("#grid a.chip.failed").first.click()
    page.wait_for_url("**/cell?key=**")
    assert page.locator("#verdict .status").inner_text() == "failed"
    explanation = page.locator("#grader-explanation").inner_text()
    assert explanation.startswith("Grader:")
    assert "(no explanation)" not in explanation
    messages = page.locator("#transcript li.msg")
    assert messages.count() >= 2
    assert page.locator("#transcript li.role-user").first.inner_text().strip() != "USER"
    # The transcript starts on the first screen.
    assert page.locator("#transcript").bounding_box()["y"] < 600
    bars = page.locator("#waterfall .span-bar")
    assert bars.count() >= 3
    box = bars.first.bounding_box()
    assert box is not None
    assert box["width"] > 50
    href = page.locator("#trace-link").get_attribute("href")
    assert href is not None
    assert href.startswith("http://localhost:16686/trace/")
    assert len(href.rsplit("/", 1)[1]) == 32
    assert page.evaluate(SIDEWAYS_JS) <= 0
    _shot(page, "cell")
    _shot(page, "cell-spans", "#spans")

    page.goto(f"{server}/compare?a={first}&b={second}")
    assert page.locator("#matrix-warning").is_visible()  # the second run has no reflexion
    assert "missing" in page.locator("#flip-counts").inner_text()
    assert page.locator("#groups tbody tr").count() == 3
    assert page.locator("#compare tbody tr").count() > 0
    assert page.locator("#compare tbody tr:not([class^='flip-'])").count() == 0
    assert page.evaluate(SIDEWAYS_JS) <= 0
    _shot(page, "compare")
    page.click("#show-flips")
    page.wait_for_url("**show=flips**")
    assert page.locator("#compare tr.flip-missing").count() == 0

    page.goto(f"{server}/runs/{first}/report")
    assert page.locator("svg.chart-svg").count() == 4
    assert page.evaluate(OVERLAPS_JS) == []
    assert page.evaluate(SIDEWAYS_JS) <= 0
    _shot(page, "report")
