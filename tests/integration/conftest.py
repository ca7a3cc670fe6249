"""Integration tests: real backends started by the tests themselves.

Not collected by the default ``pytest`` / ``nox -s tests`` run (pyproject's ``norecursedirs``
leaves this folder out); ``nox -s integration`` installs ``arize-phoenix`` beside the package and
runs ``pytest tests/integration``. By hand, with Phoenix in another venv::

    HARNESS_PHOENIX=/path/to/venv/bin/phoenix pytest tests/integration

The ``phoenix`` fixture starts one ``phoenix serve`` for the session (see phoenix_server.py),
and at the end always stops it and checks that no process of it is left. Without a Phoenix the
tests that need it are skipped, unless ``HARNESS_INTEGRATION_REQUIRED=1`` (set by the nox
session), where that is a failure.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from phoenix_server import (
    Phoenix,
    ServerNotHealthy,
    group_members,
    phoenix_command,
    start_phoenix,
    stop_group,
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "integration: needs a real backend started by the test (nox -s integration)"
    )


@pytest.fixture(scope="session")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    """``phoenix serve`` on free loopback ports; always stopped, and checked gone, at the end."""
    cmd = phoenix_command()
    if cmd is None:
        message = "arize-phoenix is not installed (nox -s integration installs it)"
        if os.environ.get("HARNESS_INTEGRATION_REQUIRED") == "1":
            pytest.fail(message)
        pytest.skip(message)
    try:
        server = start_phoenix(cmd, tmp_path_factory.mktemp("phoenix"))
    except ServerNotHealthy as exc:  # already stopped by start_phoenix
        pytest.fail(str(exc))
    try:
        yield server
    finally:
        stop_group(server.proc)
        assert server.proc.poll() is not None, f"phoenix (pid {server.pid}) is still running"
        left = group_members(server.pid)
        assert not left, f"processes of phoenix's group left behind: {left}"
        assert not Path(f"/proc/{server.pid}").exists(), f"phoenix pid {server.pid} not reaped"
