"""WORKTREE ONLY (drop at merge): subprocesses import this checkout, not the editable /work/main."""

import os
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parents[1])
os.environ["PYTHONPATH"] = os.pathsep.join(
    p for p in (_ROOT, os.environ.get("PYTHONPATH", "")) if p
)
