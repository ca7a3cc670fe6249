"""A full disk during `harness run`: a few seconds of it cost nothing (exit 0, every cell stored
once, every trace line whole); a disk that stays full ends the run with exit 3 within the
back-off budget (never 2, which is bad input), the run `failed` with an error naming the disk,
and `--resume` with the room back stores every cell exactly once.

Each scenario runs twice: on a real full file system (a 128 MiB tmpfs, made by `bwrap` in a
namespace of its own, or mounted when running as root; skipped where neither works), and with
the full disk injected into the Python writes (tests/e2e/disk_full_inject/sitecustomize.py:
ENOSPC after half a write), which runs everywhere. The scenario itself is
tests/e2e/disk_full_driver.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
DRIVER = HERE / "disk_full_driver.py"
SIZE = 128 * 1024 * 1024
TASKS = 120

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

Scenario = Callable[[str, float, float], dict[str, Any]]


def _bwrap_works(folder: Path) -> bool:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return False
    probe = subprocess.run(
        [bwrap, "--dev-bind", "/", "/", "--size", str(SIZE), "--tmpfs", str(folder), "--",
         "sh", "-c", f"test -w '{folder}' && grep -q ' {folder} tmpfs ' /proc/mounts"],
        capture_output=True, timeout=60,
    )  # fmt: skip
    return probe.returncode == 0


def _mount(folder: Path) -> bool:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    got = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={SIZE}", "tmpfs", str(folder)],
        capture_output=True, timeout=60,
    )  # fmt: skip
    return got.returncode == 0


@pytest.fixture(params=["real", "inject"])
def scenario(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Scenario]:
    """Runs the driver's scenario on a full disk made the parameter's way; returns its report."""
    how = str(request.param)
    mount = tmp_path / "disk"
    mount.mkdir()
    prefix: list[str] = []
    mounted = False
    if how == "real":
        if _bwrap_works(mount):
            prefix = ["bwrap", "--dev-bind", "/", "/", "--size", str(SIZE), "--tmpfs",
                      str(mount), "--die-with-parent", "--"]  # fmt: skip
        elif _mount(mount):
            mounted = True
        else:
            pytest.skip("no small file system here (no usable bwrap, not root); the injected "
                        "variant covers the Python writes")  # fmt: skip
    (tmp_path / "tmp").mkdir()
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp")}  # the run folder: not on that disk

    def run(kind: str, hold_s: float, wait_s: float) -> dict[str, Any]:
        out = tmp_path / "out.json"
        proc = subprocess.run(
            [*prefix, sys.executable, str(DRIVER), str(mount), str(out), kind, str(hold_s),
             str(wait_s), how],
            env=env, capture_output=True, text=True, timeout=280,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        report: dict[str, Any] = json.loads(out.read_text())
        return report

    try:
        yield run
    finally:
        if mounted:
            subprocess.run(["umount", str(mount)], check=False, timeout=60)


def test_a_disk_full_for_a_few_seconds_costs_nothing(scenario: Scenario) -> None:
    got = scenario("transient", 3.0, 30.0)
    err = got["stderr"]
    assert got["running_when_freed"], err  # the disk was full mid-run, for 3 s
    assert got["code"] == 0, err
    assert "the disk is full" in err  # it did hit the run
    assert "the disk has room again" in err
    assert "Traceback" not in err
    after = got["after_run"]
    assert after["torn_lines"] == 0  # every line of the trace file parses
    assert (after["cells"], after["rows"], after["max_rows_per_cell"]) == (TASKS, TASKS, 1)
    assert after["runs"] == [["finished", 0, None]]
    assert after["spans"] == after["trace_lines"] > 0  # no span lost either


def test_a_disk_that_stays_full_exits_3_and_resume_completes_the_run(scenario: Scenario) -> None:
    wait_s = 3.0
    got = scenario("persistent", 0.0, wait_s)
    err = got["stderr"]
    assert got["code"] == 3, err  # not 2: the input was fine
    assert "disk full:" in err
    assert f"the disk stayed full for {wait_s:.0f}" in err
    assert "--resume" in err
    assert "Traceback" not in err
    after = got["after_run"]
    assert after["torn_lines"] == 0
    assert after["max_rows_per_cell"] <= 1
    assert after["cells"] < TASKS  # the run stopped short...
    ((status, resumed, error),) = after["runs"]
    assert (status, resumed) == ("failed", 0)  # ...and says why
    assert "the disk was full" in error
    resume = got["resume"]
    assert resume["code"] == 0, resume["stderr"]
    assert resume["torn_lines"] == 0
    assert (resume["cells"], resume["rows"], resume["max_rows_per_cell"]) == (TASKS, TASKS, 1)
    assert resume["runs"] == [["finished", 1, None]]


# --- `harness compact` on a full disk -------------------------------------------------------------

COMPACT_DRIVER = HERE / "compact_disk_full_driver.py"
#: Bytes left free when the disk fills: opening the database fits in them, compacting the run's
#: shards does not (measured: the first batch of 32 shards commits, the second fails).
ROOM = 1_400_000
CompactScenario = Callable[[str, float, float], dict[str, Any]]


@pytest.fixture
def compact_scenario(tmp_path: Path) -> Iterator[CompactScenario]:
    """Runs tests/e2e/compact_disk_full_driver.py on a real small file system; returns its
    report. DuckDB's writes are C++ (the injected full disk never reaches them): real only."""
    mount = tmp_path / "disk"
    mount.mkdir()
    prefix: list[str] = []
    mounted = False
    if _bwrap_works(mount):
        prefix = ["bwrap", "--dev-bind", "/", "/", "--size", str(SIZE), "--tmpfs", str(mount),
                  "--die-with-parent", "--"]  # fmt: skip
    elif _mount(mount):
        mounted = True
    else:
        pytest.skip("no small file system here (no usable bwrap, not root)")

    def run(kind: str, hold_s: float, wait_s: float) -> dict[str, Any]:
        out = tmp_path / "out.json"
        proc = subprocess.run(
            [*prefix, sys.executable, str(COMPACT_DRIVER), str(mount), str(out), kind,
             str(hold_s), str(wait_s), str(ROOM)],
            capture_output=True, text=True, timeout=280,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        report: dict[str, Any] = json.loads(out.read_text())
        return report

    try:
        yield run
    finally:
        if mounted:
            subprocess.run(["umount", str(mount)], check=False, timeout=60)


def test_compact_on_a_disk_that_stays_full_exits_3_and_loses_nothing(
    compact_scenario: CompactScenario,
) -> None:
    wait_s = 2.0
    got = compact_scenario("persistent", 0.0, wait_s)
    err = got["stderr"]
    assert got["code"] == 3, err  # not 2: the input was fine
    assert "the disk is full" in err
    assert f"the disk stayed full for {wait_s:.0f}." in err  # the back-off's budget
    assert "nothing was lost" in err
    assert "harness compact --db" in err  # what to do
    assert "Traceback" not in err
    before = got["before"]
    assert (before["rows"], before["distinct"], before["compacted"]) == (400, 400, 0)
    full = got["while_full"]  # every row still read once, from the tables or the shards
    assert (full["rows"], full["distinct"]) == (400, 400)
    assert full["compacted"] < 400
    again = got["again"]  # with the room back, the same command finishes the job
    assert again["code"] == 0, again["stderr"]
    after = got["after"]
    assert after == {"rows": 400, "distinct": 400, "compacted": 400, "shards_left": 0}


def test_compact_waits_out_a_disk_full_for_a_moment(compact_scenario: CompactScenario) -> None:
    got = compact_scenario("transient", 2.0, 30.0)
    err = got["stderr"]
    assert got["said_full"], err  # it met the full disk (freed 2 s after it said so)
    assert got["running_when_freed"], err  # it was still waiting when the room came back
    assert got["code"] == 0, err
    assert "the disk is full" in err
    assert "the disk has room again" in err
    assert "Traceback" not in err
    assert "compacted 1 run(s): 400 results" in got["stdout"]  # a batch committed before counts
    assert got["after"] == {"rows": 400, "distinct": 400, "compacted": 400, "shards_left": 0}
