"""``python -m harness.cli ...``: the same command as the ``harness`` console script."""

from __future__ import annotations

from harness.cli import main

__all__: list[str] = []

if __name__ == "__main__":
    main()
