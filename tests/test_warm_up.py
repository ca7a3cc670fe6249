"""harness.warm_up() loads what the first run would (checked in a fresh interpreter: the
modules the first mock run imports are already there after it)."""

from __future__ import annotations

import json
import subprocess
import sys

CHILD = """
import asyncio, json, sys
import harness
harness.warm_up()
harness.warm_up()  # twice is fine
before = set(sys.modules)
asyncio.run(harness.arun("hi", provider="mock", provider_opts={"turns": [{"text": "hi"}]}))
print(json.dumps(sorted(m for m in set(sys.modules) - before if m.startswith("harness"))))
"""


def test_after_warm_up_the_first_run_imports_no_harness_module() -> None:
    out = subprocess.run(
        [sys.executable, "-c", CHILD], check=True, capture_output=True, text=True, timeout=300
    ).stdout
    assert json.loads(out.splitlines()[-1]) == []
