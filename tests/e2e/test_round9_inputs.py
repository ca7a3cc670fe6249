"""An input whose size ``stat`` does not tell (adversary round 9, issue 34). The real CLI runs
in this process (click's runner)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import harness.suites._load as load
from harness.cli import main


def test_an_input_whose_size_stat_does_not_tell_is_bounded_as_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: the size bound on inputs (suites, profiles, baselines) was checked with
    ``stat`` only, and then the file was read whole: a file in ``/proc`` (0 bytes by
    ``stat``, however much it holds) or one growing while read passed it. Now what is read
    is bounded too: ``suites validate /proc/self/maps`` with the bound at 100 bytes is
    refused, exit 2."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(load, "MAX_INPUT_BYTES", 100)
    done = CliRunner().invoke(main, ["suites", "validate", "/proc/self/maps"])
    out = " ".join(done.output.split())
    assert done.exit_code == 2, out
    assert "/proc/self/maps is larger than 100 bytes" in out
