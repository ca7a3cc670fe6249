"""Faults found by adversary round 11, part B (issue 34), through the real CLI: click's runner
in this process, or a subprocess where a stream is the point. Each test fails on the code
before the round."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main

SUITE = Path(__file__).resolve().parents[2] / "suites" / "arithmetic.yaml"


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database holding one run of one cell."""
    folder = tmp_path_factory.mktemp("stored")
    done = CliRunner().invoke(main, ["run", str(SUITE), "--providers", "mock", "--modes",
                                     "react", "--db", str(folder / "h.duckdb"), "--no-progress",
                                     "--tasks", "add-small"])  # fmt: skip
    assert done.exit_code == 0, done.output
    return folder


@pytest.mark.parametrize("via", ["link to fd 1", "folder link to fds"])
def test_baseline_save_to_standard_output_sent_to_a_file_writes_the_json_there(
    stored: Path, via: str
) -> None:
    """Before: ``-o /dev/stdout > b.json`` (here a link of the test's own to ``/proc/self/fd/1``,
    and ``fds/1`` with ``fds`` a link to ``/proc/self/fd``, as ``/dev/fd`` is) took the output
    for a regular file, since the link chain ends at ``b.json``: it was renamed over the link
    (``/dev/stdout`` itself, as root) and ``b.json`` got only the "wrote" line; or, through
    the folder link, a temporary file could not be made in ``/proc``. Now the JSON is written
    into standard output, the "wrote" line goes to standard error."""
    if via == "link to fd 1":
        output = stored / "stdout-link"
        output.unlink(missing_ok=True)
        output.symlink_to("/proc/self/fd/1")
    else:
        fds = stored / "fds"
        fds.unlink(missing_ok=True)
        fds.symlink_to("/proc/self/fd")
        output = fds / "1"
    sent = stored / f"b-{via.replace(' ', '-')}.json"
    with sent.open("wb") as out:
        done = subprocess.run(
            [sys.executable, "-m", "harness.cli", "baseline", "save", "--db",
             str(stored / "h.duckdb"), "-o", str(output)],  # fmt: skip
            stdout=out, stderr=subprocess.PIPE, timeout=120, text=True, check=False,
        )
    assert done.returncode == 0, done.stderr
    assert json.loads(sent.read_text())["totals"]["cells"] == 1
    assert f"wrote {output}" in done.stderr
    if via == "link to fd 1":
        assert os.readlink(output) == "/proc/self/fd/1"  # the link is still there
