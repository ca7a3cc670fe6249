"""Tests against a real local Ray cluster.

A plain ``pytest`` run skips them when Ray is not installed; ``nox -s ray`` installs the ``ray``
extra and sets ``HARNESS_RAY_REQUIRED=1``, which turns that skip into a failure.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType

import pytest
from ray_helpers import require_ray


@pytest.fixture(scope="module")
def ray_local() -> Iterator[ModuleType]:
    """One in-process local cluster (2 CPUs) per test module: Ray takes seconds to start."""
    ray = require_ray()
    ray.init(
        address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
        logging_level="warning",
    )  # fmt: skip
    try:
        yield ray
    finally:
        ray.shutdown()
