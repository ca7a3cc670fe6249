"""Regenerate the field reference at the end of docs/suites.md from the suite and grader models
(tests/suites/test_schema.py fails when the page is out of date).

    python scripts/suite_reference.py
"""

from __future__ import annotations

from pathlib import Path

from harness.suites._reference import update_page

if __name__ == "__main__":
    page = Path(__file__).resolve().parents[1] / "docs" / "suites.md"
    print(f"{page}: {'updated' if update_page(page) else 'up to date'}")
