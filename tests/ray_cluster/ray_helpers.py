"""Helpers of the Ray cluster tests (imported as ``ray_helpers``; the folder is not called
``ray``, which would shadow the real package on ``sys.path``)."""

from __future__ import annotations

import os
from types import ModuleType

import pytest

from tests.suite_files import latency_suite

__all__ = ["latency_suite", "require_ray"]


def require_ray() -> ModuleType:
    """The ``ray`` module; skip without it, or fail when ``HARNESS_RAY_REQUIRED=1``."""
    try:
        import ray
    except ImportError:
        message = "ray is not installed (nox -s ray installs the athena-harness[ray] extra)"
        if os.environ.get("HARNESS_RAY_REQUIRED") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return ray
