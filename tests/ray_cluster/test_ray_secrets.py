"""With ``--executor ray`` a key a provider echoes reaches no sink either (issue 27, item 5): the
Ray workers export OTLP and write their span files through the run's redactor, and the driver
scrubs their span lines before it appends them to the trace file."""

from __future__ import annotations

from pathlib import Path

import pytest
from ray_helpers import require_ray

from tests.bench.test_secret_sinks import _leaks, _project

#: Spawns processes, sandboxes, browsers, clusters or servers (the fast loop skips it).
pytestmark = pytest.mark.slow


@pytest.mark.timeout(300)
def test_a_ray_run_exports_and_stores_no_key(tmp_path: Path) -> None:
    require_ray()
    with _project(tmp_path) as project:
        run = project.harness(
            "leak.yaml", "--providers", "leaky", "--modes", "react", "--no-progress",
            "--record-mode", "all", "--cassettes", "cas", "--db", "db/h.duckdb",
            "--trace-file", "t.jsonl", "--otlp-endpoint", project.collector, "--capture-content",
            "--executor", "ray", "--workers", "1",
        )  # fmt: skip
        assert run.returncode == 3, run.stderr[-3000:]  # the 401 cell is an error cell
        received = b"".join(project.fake.otlp)
        assert b"Incorrect API key provided: REDACTED" in received  # the workers exported
        assert not _leaks(received)
        trace = (project.root / "t.jsonl").read_text(encoding="utf-8")
        assert "Incorrect API key provided: REDACTED" in trace
        assert not _leaks(trace)
        assert not _leaks(run.stdout + run.stderr)
