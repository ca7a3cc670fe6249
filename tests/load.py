"""Load for the tests that check a result does not depend on it: one busy process per core."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["busy_cores"]


@contextmanager
def busy_cores() -> Iterator[None]:
    """One process spinning on each core (at the caller's priority) until the block ends."""
    burners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(os.cpu_count() or 2)
    ]
    try:
        yield
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
