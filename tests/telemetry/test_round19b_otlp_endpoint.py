"""Faults found by adversary round 19, part B (issue 34), at the one address round 18's
masking did not reach: ``--otlp-endpoint``. An address ``urlparse`` refuses
(``http://[::1``, a port past 65535) ended ``harness run`` with a ``ValueError`` traceback,
exit 1; and a password in it was printed whole in the warning that the spans cannot be
exported (``cannot export spans to http://u:SECRETPW@...``). Each fails on f4c036f."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SUITE = Path(__file__).resolve().parents[2] / "suites" / "arithmetic.yaml"


def _run(tmp_path: Path, endpoint: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", str(SUITE), "--providers", "mock",
         "--modes", "react", "--tasks", "add-small", "--db", str(tmp_path / "h.duckdb"),
         "--no-progress", "--otlp-endpoint", endpoint],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.mark.parametrize("endpoint", ["http://[::1", "http://u:SECRETPW@127.0.0.1:99999/v1/traces"])
def test_an_endpoint_urlparse_refuses_is_one_line(tmp_path: Path, endpoint: str) -> None:
    done = _run(tmp_path, endpoint)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "is no usable address" in done.stderr
    assert "SECRETPW" not in done.stderr


def test_the_endpoint_s_password_is_not_printed(tmp_path: Path) -> None:
    done = _run(tmp_path, "http://u:SECRETPW@127.0.0.1:18997")  # nothing listens there
    assert done.returncode == 0, done.stderr
    assert "cannot export spans to http://u:***@127.0.0.1:18997" in done.stderr, done.stderr
    assert "SECRETPW" not in done.stdout + done.stderr
